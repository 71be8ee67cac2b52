/**
 * MemoryStorage.restore and the watches open across it: a watch over a key
 * the restore changed ends with Compacted (its client lists again), one over
 * keys the restore left alone goes on, and a progress request moves it to
 * the store's new revision.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { StorageError, type StorageEvent, type Watcher } from '../../../core/storage/interface.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const cm = (namespace: string, name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
})
const key = (namespace: string, name: string) => `/registry/configmaps/${namespace}/${name}`

const iterators = new WeakMap<Watcher, AsyncIterator<StorageEvent, undefined>>()

/** The next event, or the error the watch ended with. */
async function nextOf(w: Watcher): Promise<StorageEvent | StorageError | 'ended'> {
  let events = iterators.get(w)
  if (!events) iterators.set(w, (events = w[Symbol.asyncIterator]()))
  try {
    const next = await events.next()
    return next.done ? 'ended' : next.value
  } catch (err) {
    if (err instanceof StorageError) return err
    throw err
  }
}

describe('MemoryStorage.restore with watches open', () => {
  async function seeded(): Promise<{ store: MemoryStorage; snapshot: ReturnType<MemoryStorage['snapshot']>; at: number }> {
    const store = new MemoryStorage()
    await store.create(key('a', 'one'), cm('a', 'one'))
    await store.create(key('b', 'one'), cm('b', 'one'))
    return { store, snapshot: store.snapshot(), at: await store.currentRevision() }
  }

  it('ends the watches over keys it changed, keeps the others, and moves them on when asked', async () => {
    const { store, snapshot, at } = await seeded()
    const watchA = store.watch('/registry/configmaps/a/', { resourceVersion: String(at) })
    const watchB = store.watch('/registry/configmaps/b/', { resourceVersion: String(at) })
    const watchOne = store.watch(key('a', 'one'), { resourceVersion: String(at) })
    // A test's writes: a create under a/ only.
    await store.create(key('a', 'two'), cm('a', 'two'))
    assert.equal(((await nextOf(watchA)) as StorageEvent).type, 'ADDED')
    store.restore(snapshot)
    const restoredAt = await store.currentRevision()
    assert.ok(restoredAt > at + 1, 'revisions never go backwards')

    const endA = await nextOf(watchA)
    assert.ok(endA instanceof StorageError && endA.code === 'Compacted', `the watch over a/ ends: ${String(endA)}`)
    // The watch of a/one saw no change of its own, though its neighbour was removed.
    watchOne.requestProgress!()
    const bookmarkOne = await nextOf(watchOne)
    assert.equal((bookmarkOne as StorageEvent).type, 'BOOKMARK')
    assert.equal((bookmarkOne as StorageEvent).revision, restoredAt)

    watchB.requestProgress!()
    const bookmarkB = (await nextOf(watchB)) as StorageEvent
    assert.equal(bookmarkB.type, 'BOOKMARK')
    assert.equal(bookmarkB.revision, restoredAt)
    // And it carries on with the writes after the restore.
    const later = await store.create(key('b', 'two'), cm('b', 'two'))
    const added = (await nextOf(watchB)) as StorageEvent
    assert.equal(added.type, 'ADDED')
    assert.equal(added.object.metadata.name, 'two')
    assert.equal(added.object.metadata.resourceVersion, later.metadata.resourceVersion)
    watchB.stop()
    watchOne.stop()
  })

  it('counts an update, a deletion and a creation undone alike as changes', async () => {
    for (const change of ['update', 'delete', 'create'] as const) {
      const { store, snapshot, at } = await seeded()
      const watchA = store.watch('/registry/configmaps/a/', { resourceVersion: String(at) })
      if (change === 'update') await store.guaranteedUpdate(key('a', 'one'), (o) => ({ ...o, data: { x: 'y' } }))
      if (change === 'delete') await store.delete(key('a', 'one'))
      if (change === 'create') await store.create(key('a', 'two'), cm('a', 'two'))
      assert.notEqual(((await nextOf(watchA)) as StorageEvent).type, 'BOOKMARK')
      store.restore(snapshot)
      const end = await nextOf(watchA)
      assert.ok(end instanceof StorageError && end.code === 'Compacted', `${change}: ${String(end)}`)
      assert.deepEqual((await store.get(key('a', 'one')))?.data, {}, change)
      assert.equal(await store.get(key('a', 'two')), undefined, change)
    }
  })

  it('refuses a watch from before the restore, on any key', async () => {
    const { store, snapshot, at } = await seeded()
    store.restore(snapshot)
    const stale = store.watch('/registry/configmaps/b/', { resourceVersion: String(at) })
    const end = await nextOf(stale)
    assert.ok(end instanceof StorageError && end.code === 'Compacted', String(end))
  })
})
