/**
 * Sorting a long array as checkpointed work. Array.prototype.sort is one
 * piece: a level of a few hundred thousand keys held the thread 20 to 45 ms
 * to sort with a comparison written in JavaScript. Here runs of SORT_RUN
 * elements are sorted each at once, then merged pairwise, with a checkpoint
 * between runs; the work in all is the same O(n log n).
 */
import type { Checkpointed } from './time-slice.js'

/** Elements sorted, or moved by a merge, between two checkpoints. */
export const SORT_RUN = 4096

/** `items` sorted in place by `compare`, and returned; a short array is sorted at once. */
export function* sortInSteps<T>(items: T[], compare: (a: T, b: T) => number): Checkpointed<T[]> {
  const n = items.length
  if (n <= SORT_RUN) return items.sort(compare)
  for (let start = 0; start < n; start += SORT_RUN) {
    const run = items.slice(start, start + SORT_RUN).sort(compare)
    for (let i = 0; i < run.length; i++) items[start + i] = run[i]!
    yield
  }
  let from = items
  let to = new Array<T>(n)
  for (let width = SORT_RUN; width < n; width *= 2) {
    let moved = 0
    for (let left = 0; left < n; left += 2 * width) {
      const middle = Math.min(left + width, n)
      const end = Math.min(left + 2 * width, n)
      let i = left
      let j = middle
      for (let k = left; k < end; k++) {
        // Ties take the left run's element first: the sort is stable, as Array.prototype.sort is.
        to[k] = j >= end || (i < middle && compare(from[i]!, from[j]!) <= 0) ? from[i++]! : from[j++]!
        if (++moved % SORT_RUN === 0) yield
      }
    }
    ;[from, to] = [to, from]
  }
  if (from !== items) for (let i = 0; i < n; i++) items[i] = from[i]!
  return items
}
