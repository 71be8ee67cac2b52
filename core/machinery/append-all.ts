import { type Checkpointed, checkpointDue } from './time-slice.js'
/**
 * Appends `items` to `target` one by one. `target.push(...items)` passes
 * each item as an argument, and a call takes only so many (some 100,000
 * here): the errors of a list a client sent could be more, and the stack
 * overflow would answer 500. An array is walked by index, without an
 * iterator: a million items' validation appends some millions of errors.
 */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  if (Array.isArray(items)) {
    const list = items as readonly T[]
    for (let i = 0; i < list.length; i++) target.push(list[i]!)
    return target
  }
  for (const item of items) target.push(item)
  return target
}

/**
 * The same in checkpointed steps: a generator's errors are gathered level by
 * level, and a list of a million items has millions of them, each level's
 * copy a pass of its own.
 */
export function* appendAllInSteps<T>(target: T[], items: readonly T[]): Checkpointed<T[]> {
  for (let i = 0; i < items.length; i++) {
    target.push(items[i]!)
    if (checkpointDue()) yield
  }
  return target
}
