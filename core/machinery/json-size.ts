/**
 * Whether a JSON value is large, told without walking all of it: the count
 * stops at the limit, so asking costs at most `limit` steps however large
 * the value is, and a small object's own size.
 */

/** Whether `value` holds more than `limit` values (objects, arrays and scalars, itself included). */
export function hasMoreValuesThan(value: unknown, limit: number): boolean {
  const pending: unknown[] = [value]
  let seen = 0
  while (pending.length > 0) {
    const next = pending.pop()
    if (++seen > limit) return true
    if (typeof next !== 'object' || next === null) continue
    // Values waiting are counted too, so that a level of a million keys is read no further than the limit.
    if (Array.isArray(next)) {
      for (const item of next) if (pending.push(item) + seen > limit) return true
    } else {
      for (const key in next) {
        if (Object.hasOwn(next, key) && pending.push((next as Record<string, unknown>)[key]) + seen > limit) return true
      }
    }
  }
  return false
}
