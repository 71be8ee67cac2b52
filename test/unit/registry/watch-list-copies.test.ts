/**
 * A watch-list (sendInitialEvents) reads the collection's state once at its
 * start, in one step. Its client only encodes the events, so from the watch
 * cache it takes the cached objects themselves, as upstream's cacher serves
 * its initial events from its own store: a copy of every object of a large
 * collection held the thread for hundreds of milliseconds per watch, and a
 * caller could open such watches at will (watches take no in-flight seat).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { WatchListWatcher } from '../../../core/registry/watch-list.js'
import type { StorageEvent } from '../../../core/storage/interface.js'
import { MemoryStorage } from '../../../core/storage/memory.js'
import { WatchCache } from '../../../core/storage/watch-cache.js'

const PREFIX = '/registry/configmaps/'
const COUNT = 50

async function cacheWithObjects(): Promise<WatchCache> {
  const cache = new WatchCache(new MemoryStorage())
  cache.cacheResource(PREFIX)
  await cache.loaded()
  for (let i = 0; i < COUNT; i++) {
    const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'ns' }, data: { k: 'v' } }
    await cache.create(`${PREFIX}ns/c${i}`, obj)
  }
  return cache
}

async function initialEvents(cache: WatchCache, readOnly: boolean): Promise<StorageEvent[]> {
  const controller = new AbortController()
  const watcher = new WatchListWatcher(cache, {
    listPrefix: PREFIX,
    target: PREFIX,
    resourceVersion: undefined,
    sendInitialEvents: true,
    predicate: undefined,
    allowWatchBookmarks: true,
    bookmarkIntervalMs: 60_000,
    signal: controller.signal,
    interpretError: (err) => err,
    readOnly,
  })
  const events: StorageEvent[] = []
  for await (const event of watcher) {
    if (event.type === 'BOOKMARK') break
    events.push(event)
  }
  controller.abort()
  return events
}

describe('watch-list initial events from the watch cache', () => {
  it('are the cached objects themselves when the client only reads them: no object is copied', async () => {
    const cache = await cacheWithObjects()
    try {
      const events = await initialEvents(cache, true)
      assert.equal(events.length, COUNT)
      const copied = events.filter((e) => !Object.isFrozen(e.object))
      assert.equal(copied.length, 0)
    } finally {
      await cache.close()
    }
  })

  it('are copies the caller owns when it did not promise to only read them', async () => {
    const cache = await cacheWithObjects()
    try {
      const events = await initialEvents(cache, false)
      assert.equal(events.length, COUNT)
      assert.ok(events.every((e) => !Object.isFrozen(e.object)))
    } finally {
      await cache.close()
    }
  })
})
