/**
 * The watch cache's window of recent changes: it starts small and grows to
 * its capacity as changes come, keeping them in order, and once full it
 * drops the oldest and says from which revision on it is complete.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CachedChange, EventWindow } from '../../../core/storage/cacher-store.js'

const change = (revision: number): CachedChange => ({
  key: `/registry/configmaps/default/c${revision}`,
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${revision}`, resourceVersion: String(revision) } },
  previous: undefined,
  deleted: false,
  revision,
})
const revisions = (changes: CachedChange[]): number[] => changes.map((c) => c.revision)

describe('EventWindow', () => {
  it('keeps every change in order while it grows to its capacity', () => {
    const window = new EventWindow(100)
    window.reset(10)
    for (let rev = 11; rev <= 110; rev++) window.push(change(rev))
    assert.equal(window.oldestStart(), 10, 'nothing dropped: complete from the list on')
    assert.deepEqual(revisions(window.since(10)), Array.from({ length: 100 }, (_, i) => 11 + i))
    assert.deepEqual(revisions(window.since(105)), [106, 107, 108, 109, 110])
  })

  it('drops the oldest once full, also after growing from a wrapped ring', () => {
    const window = new EventWindow(40)
    window.reset(0)
    for (let rev = 1; rev <= 16; rev++) window.push(change(rev))
    window.forgetUpTo(5) // the small ring's start moves, so growing must unwrap it
    for (let rev = 17; rev <= 60; rev++) window.push(change(rev))
    // 6..60 is 55 changes: the 40 newest are kept.
    assert.deepEqual(revisions(window.since(0)), Array.from({ length: 40 }, (_, i) => 21 + i))
    assert.equal(window.oldestStart(), 20)
  })

  it('starts again empty after a reset', () => {
    const window = new EventWindow(3)
    window.reset(0)
    for (let rev = 1; rev <= 5; rev++) window.push(change(rev))
    window.reset(7)
    assert.deepEqual(window.since(0), [])
    assert.equal(window.oldestStart(), 7)
    window.push(change(8))
    assert.deepEqual(revisions(window.since(7)), [8])
  })
})
