/**
 * The watch cache's index of current objects (core/storage/cacher-store.ts):
 * whatever mix of sets, replacements and deletes comes between scans, a
 * scan answers in key order with the newest object of each key, as a plain
 * map sorted on the spot would.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { ObjectIndex } from '../../../core/storage/cacher-store.js'

/** A small deterministic generator, so a failure repeats. */
function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const obj = (key: string, version: number): KubeObject => ({ metadata: { name: key, resourceVersion: String(version) } })

function expected(model: Map<string, KubeObject>, prefix: string): string[] {
  return [...model.keys()]
    .filter((k) => k.startsWith(prefix))
    .sort()
    .map((k) => `${k}@${model.get(k)!.metadata.resourceVersion}`)
}

const seen = (objects: KubeObject[]) => objects.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)

describe('the watch cache’s object index', () => {
  it('scans in key order with each key’s newest object, whatever came between scans', () => {
    const random = generator(7)
    const index = new ObjectIndex()
    const model = new Map<string, KubeObject>()
    // Neighbours of '/r/a/' on both sides in key order ('.' below '/', '0' just above it; '/r/a' and a number
    // on either side) test where a scan stops.
    const namespaces = ['/r/a/', '/r/b/', '/r/ab/', '/r/Ä/', '/r/a./', '/r/a0/', '/r/a']
    for (let step = 0; step < 20000; step++) {
      const key = `${namespaces[Math.floor(random() * namespaces.length)]}${Math.floor(random() * 300)}`
      const roll = random()
      if (roll < 0.55) {
        const o = obj(key, step)
        index.set(key, o)
        model.set(key, o)
      } else if (roll < 0.8) {
        index.delete(key)
        model.delete(key)
      } else {
        const prefixes = namespaces.filter((n) => n.endsWith('/'))
        const prefix = roll < 0.9 ? '/r/' : prefixes[Math.floor(random() * prefixes.length)]!
        assert.deepEqual(seen(index.matching(prefix)), expected(model, prefix), `step ${step}, prefix ${prefix}`)
      }
      assert.equal(index.size, model.size)
      assert.equal(index.get(key), model.get(key))
    }
  })

  it('answers one key, and applies the filter to a scan', () => {
    const index = new ObjectIndex()
    for (const k of ['/r/a/2', '/r/a/10', '/r/a/1']) index.set(k, obj(k, Number(k.slice(5))))
    assert.deepEqual(seen(index.matching('/r/a/10')), ['/r/a/10@10'])
    assert.deepEqual(seen(index.matching('/r/a/x')), [])
    assert.deepEqual(seen(index.matching('/r/a/', (o) => o.metadata.resourceVersion !== '2')), ['/r/a/1@1', '/r/a/10@10'])
  })
})
