/**
 * Appends `items` to `target` one by one. `target.push(...items)` passes
 * each item as an argument, and a call takes only so many (some 100,000
 * here): the errors of a list a client sent could be more, and the stack
 * overflow would answer 500.
 */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item)
  return target
}
