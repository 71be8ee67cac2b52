import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../../core/storage/memory.js'
import { lowerBound, SortedKeys } from '../../../core/storage/sorted-keys.js'

/** A small deterministic generator, so that a failure replays. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
}

describe('sorted keys', () => {
  it('hold what was added and not removed, in order, whatever mix of adds, removes and scans came before', () => {
    const next = random(7)
    const keys = new SortedKeys()
    const held = new Set<string>()
    for (let step = 0; step < 20_000; step++) {
      const key = `/registry/r${Math.floor(next() * 5)}/ns/${Math.floor(next() * 400)}`
      if (held.has(key)) {
        keys.remove(key)
        held.delete(key)
      } else {
        keys.add(key)
        held.add(key)
      }
      // Scans between runs of one to forty changes: placed a few at a time and many at once.
      if (next() < 0.05) assert.deepEqual(keys.inOrder(), [...held].sort(), `step ${step}`)
    }
    assert.deepEqual(keys.inOrder(), [...held].sort())
  })

  it('keep a key removed and added back before a scan once, in place', () => {
    const keys = new SortedKeys()
    keys.replaceWith(['a', 'b', 'c'])
    keys.remove('b')
    keys.add('b')
    keys.add('bb')
    assert.deepEqual(keys.inOrder(), ['a', 'b', 'bb', 'c'])
  })

  it('find the first key at or past a target from a given index', () => {
    const keys = ['a/1', 'a/2', 'b/1', 'c/1']
    assert.equal(lowerBound(keys, 'b/'), 2)
    assert.equal(lowerBound(keys, 'a/'), 0)
    assert.equal(lowerBound(keys, 'd'), 4)
    assert.equal(lowerBound(keys, 'a/', 3), 3)
  })

  it('let the memory store list in key order after creates, deletes and a compaction', async () => {
    const store = new MemoryStorage({ historyLimit: 50 })
    const obj = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } })
    const names = Array.from({ length: 200 }, (_, i) => `cm-${(i * 37) % 200}`)
    for (const name of names) await store.create(`/registry/configmaps/default/${name}`, obj(name))
    for (const name of names.slice(0, 60)) await store.delete(`/registry/configmaps/default/${name}`)
    const listed = (await store.list('/registry/configmaps/default/')).items.map((o) => o.metadata.name)
    assert.deepEqual(listed, names.slice(60).sort())
    assert.equal(await store.count('/registry/configmaps/'), 140)
  })
})
