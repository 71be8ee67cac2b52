/**
 * What the in-memory store's watches hand over: a watcher that only reads
 * (a watch cache, an informer) gets the store's own deep-frozen objects,
 * any other watcher copies it may change; and what a write answers is the
 * caller's own either way.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import type { StorageEvent, Watcher } from '../../../core/storage/interface.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const KEY = '/registry/configmaps/default/c'
const cm = (value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { value } })

async function next(w: Watcher): Promise<StorageEvent> {
  const step = await w[Symbol.asyncIterator]().next()
  assert.ok(!step.done, 'an event')
  return step.value
}

describe("the in-memory store's watch events", () => {
  it("are the store's own frozen objects for a read-only watcher, copies for any other", async () => {
    const store = new MemoryStorage()
    const readOnly = store.watch('/registry/configmaps/', { resourceVersion: '0', readOnly: true })
    const changing = store.watch('/registry/configmaps/', { resourceVersion: '0' })
    const created = await store.create(KEY, cm('a'))
    const shared = await next(readOnly)
    const own = await next(changing)
    assert.equal(shared.type, 'ADDED')
    assert.ok(Object.isFrozen(shared.object) && Object.isFrozen(shared.object['data']), 'frozen all through')
    assert.equal(shared.object, await store.get(KEY, { readOnly: true }), "the store's own object")
    assert.ok(!Object.isFrozen(own.object))
    assert.notEqual(own.object, shared.object)
    assert.deepEqual(own.object, shared.object)
    // The write's answer is the caller's: changing it changes nothing stored.
    ;(created['data'] as Record<string, string>)['value'] = 'changed'
    assert.deepEqual((await store.get(KEY))?.['data'], { value: 'a' })
    readOnly.stop()
    changing.stop()
  })

  it('carry a deletion and an update as frozen objects of their own revision, the stored ones left as they were', async () => {
    const store = new MemoryStorage()
    await store.create(KEY, cm('a'))
    const watch = store.watch(KEY, { resourceVersion: String(await store.currentRevision()), readOnly: true })
    const updated = await store.guaranteedUpdate(KEY, (o) => ({ ...o, data: { value: 'b' } }))
    ;(updated['data'] as Record<string, string>)['value'] = 'changed by the caller'
    const modified = await next(watch)
    assert.equal(modified.type, 'MODIFIED')
    assert.deepEqual(modified.object['data'], { value: 'b' })
    assert.ok(Object.isFrozen(modified.object))
    await store.delete(KEY)
    const deleted = await next(watch)
    assert.equal(deleted.type, 'DELETED')
    assert.deepEqual(deleted.object['data'], { value: 'b' })
    assert.ok(Object.isFrozen(deleted.object))
    watch.stop()
  })
})
