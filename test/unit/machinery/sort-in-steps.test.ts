/**
 * A long array sorted in runs, with checkpoints between them (the keys of a
 * level of many keys, in Go's order): the same order as sorting it at once.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compareGoStrings } from '../../../core/encoding/go-json.js'
import { SORT_RUN, sortInSteps } from '../../../core/machinery/sort-in-steps.js'
import { runCounting } from '../../fixtures/checkpoints.js'

function sortedCounting<T>(items: T[], compare: (a: T, b: T) => number): { sorted: T[]; checkpoints: number } {
  const { value: sorted, checkpoints } = runCounting(sortInSteps(items, compare))
  return { sorted, checkpoints }
}

describe('sorting in steps', () => {
  it('gives the order a sort at once gives, for lengths on either side of a run and of several', () => {
    let seed = 11
    const next = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
    for (const length of [0, 1, 2, SORT_RUN - 1, SORT_RUN, SORT_RUN + 1, 3 * SORT_RUN + 17, 5 * SORT_RUN]) {
      const keys = Array.from({ length }, () => `k${Math.floor(next() * length * 4).toString(36)}\u{1F600}`.slice(0, 2 + Math.floor(next() * 6)))
      const atOnce = [...keys].sort(compareGoStrings)
      const input = [...keys]
      const { sorted, checkpoints } = sortedCounting(input, compareGoStrings)
      assert.deepEqual(sorted, atOnce, `${length} keys`)
      assert.equal(sorted, input, 'sorted in place')
      if (length <= SORT_RUN) assert.equal(checkpoints, 0, `${length} keys: at once`)
      else assert.ok(checkpoints >= Math.floor(length / SORT_RUN), `${length} keys: ${checkpoints} checkpoints`)
    }
  })

  it('keeps equal elements in their order, as Array.prototype.sort does', () => {
    const items = Array.from({ length: 3 * SORT_RUN }, (_, i) => ({ key: i % 7, at: i }))
    const { sorted } = sortedCounting(items, (a, b) => a.key - b.key)
    for (let i = 1; i < sorted.length; i++) {
      const [a, b] = [sorted[i - 1]!, sorted[i]!]
      assert.ok(a.key < b.key || (a.key === b.key && a.at < b.at), `at ${i}`)
    }
  })
})
