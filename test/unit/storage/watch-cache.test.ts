import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { Logger } from '../../../core/logging/logger.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { StorageError, type StorageEvent, type Watcher } from '../../../core/storage/interface.js'
import { commonDirectory } from '../../../core/storage/waiting-objects.js'
import { WatchCache, type WatchCacheOptions } from '../../../core/storage/watch-cache.js'
import { ObservedStorage } from './observed-storage.js'

const CM = '/registry/configmaps/'
const SECRETS = '/registry/secrets/'

function cm(name: string, labels?: Record<string, string>, namespace = 'default'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data: {} }
}

const key = (name: string, namespace = 'default') => `${CM}${namespace}/${name}`

function rv(obj: KubeObject): number {
  return Number(obj.metadata.resourceVersion)
}

async function cacheOver(t: TestContext, opts: WatchCacheOptions = {}, backend = new ObservedStorage()) {
  const cache = new WatchCache(backend, opts)
  cache.cacheResource(CM)
  cache.cacheResource(SECRETS)
  t.after(() => cache.close())
  await cache.loaded()
  return { backend, cache }
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 5000)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits (boundedly) until `condition` holds; a wait, never a measure of time. */
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.ok(condition(), `timed out waiting for ${what}`)
}

function reader(w: Watcher) {
  const it = w[Symbol.asyncIterator]()
  return {
    async next(): Promise<StorageEvent> {
      const r = await within(it.next(), 'a watch event')
      assert.equal(r.done, false, 'the watch ended early')
      return r.value as StorageEvent
    },
    /** Every event left, until the watch ends. */
    async rest(): Promise<StorageEvent[]> {
      const out: StorageEvent[] = []
      for (;;) {
        const r = await within(it.next(), 'the watch to end')
        if (r.done) return out
        out.push(r.value)
      }
    },
  }
}

/** How many storage watches the cache opened for its configmaps so far. */
const configmapWatches = (backend: ObservedStorage) => backend.watches.filter((w) => w.prefix === CM).length

const names = (items: readonly KubeObject[]) => items.map((o) => o.metadata.name)
const summary = (events: readonly StorageEvent[]) => events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`)

/** A store that refuses calls once closed, as etcd's client does. */
class RefusingOnceClosed extends ObservedStorage {
  private closed = false
  override currentRevision(): Promise<number> {
    return this.closed ? Promise.reject(new StorageError('Unavailable', '', 'the etcd client was already closed')) : super.currentRevision()
  }
  override close(): Promise<void> {
    this.closed = true
    return super.close()
  }
}

describe('watch cache', () => {
  it('tells its observers of every object it loads and every one a change writes, not of deletions, and goes on past one that fails', async (t) => {
    const backend = new ObservedStorage()
    await backend.create(key('before'), cm('before'))
    const observers = new Set<(object: KubeObject) => void>()
    const told: string[] = []
    observers.add(() => {
      throw new Error('a failing observer')
    })
    observers.add((object) => void told.push(object.metadata.name ?? ''))
    const warnings: string[] = []
    const logger: Logger = { debug: () => {}, info: () => {}, warn: (_fields, message) => void warnings.push(message), error: () => {} }
    const { cache } = await cacheOver(t, { observers, logger }, backend)
    assert.deepEqual(told, ['before'], 'the load')
    await cache.create(key('after'), cm('after'))
    await cache.delete(key('before'))
    // A consistent list from the cache waits until the cache holds both writes; it still serves what the store holds.
    assert.deepEqual(names((await cache.list(CM, {})).items), ['after'])
    assert.deepEqual(told, ['before', 'after'])
    assert.ok(warnings.includes('an observer of the watch cache failed'), warnings.join())
  })

  it('ends a watch without a resourceVersion that the cache closed under before it began, asking the closed store nothing', async () => {
    const cache = new WatchCache(new RefusingOnceClosed())
    cache.cacheResource(CM)
    await cache.loaded()
    const watch = cache.watch(CM)
    await cache.close()
    const first = await within(watch[Symbol.asyncIterator]().next(), 'the watch to end')
    assert.equal(first.done, true)
  })

  it('keeps one storage watch per resource however many clients watch it', async (t) => {
    const { backend, cache } = await cacheOver(t)
    const start = String(await cache.currentRevision())
    const watchers = [
      cache.watch(CM, { resourceVersion: '0' }),
      cache.watch(CM, { resourceVersion: start }),
      cache.watch(`${CM}default/`, { resourceVersion: start }),
      cache.watch(key('a'), { resourceVersion: start }),
      cache.watch(CM, { resourceVersion: start, predicate: (o) => o.metadata.name === 'a' }),
      ...Array.from({ length: 5 }, () => cache.watch(CM, { resourceVersion: start })),
    ]
    await cache.create(key('a'), cm('a'))
    for (const w of watchers) assert.deepEqual(summary([await reader(w).next()]), ['ADDED a'])
    assert.deepEqual(
      backend.watches.map((w) => w.prefix),
      [CM, SECRETS],
      'one storage watch for each cached resource, none for the clients',
    )
  })

  it('answers resourceVersion "0" and not-older-than lists without listing the storage', async (t) => {
    const { backend, cache } = await cacheOver(t)
    await cache.create(key('a'), cm('a', { app: 'web' }))
    await cache.create(key('c', 'other'), cm('c', { app: 'web' }, 'other'))
    const b = await cache.create(key('b'), cm('b', { app: 'db' }))
    const before = backend.lists.length
    const fresh = await cache.list(CM, { resourceVersion: String(rv(b)), resourceVersionMatch: 'NotOlderThan' })
    assert.deepEqual(names(fresh.items), ['a', 'b', 'c'])
    assert.equal(fresh.revision, rv(b))
    assert.deepEqual(names((await cache.list(CM, { resourceVersion: String(rv(b)) })).items), ['a', 'b', 'c'])
    assert.deepEqual(names((await cache.list(CM, { resourceVersion: '0' })).items), ['a', 'b', 'c'])
    assert.deepEqual(names((await cache.list(`${CM}default/`, { resourceVersion: '0' })).items), ['a', 'b'])
    const web = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
    assert.deepEqual(names((await cache.list(CM, { resourceVersion: '0', predicate: web })).items), ['a', 'c'])
    // As upstream, the cache ignores a limit at resourceVersion "0" and answers every match.
    const unpaged = await cache.list(CM, { resourceVersion: '0', limit: 1 })
    assert.deepEqual(names(unpaged.items), ['a', 'b', 'c'])
    assert.equal(unpaged.continue, undefined)
    assert.equal(backend.lists.length, before, 'none of these reached the storage')

    // A consistent list is the cache's too (upstream's ConsistentListFromCache), once it caught up with the storage.
    assert.deepEqual(names((await cache.list(CM)).items), ['a', 'b', 'c'])
    assert.equal(backend.lists.length, before, 'a consistent list did not reach the storage')
    await cache.list(CM, { resourceVersion: String(rv(b)), resourceVersionMatch: 'Exact' })
    const page = await cache.list(CM, { limit: 1 })
    await cache.list(CM, { limit: 1, continue: page.continue! })
    await cache.list(CM, { resourceVersion: String(rv(b)), limit: 1 })
    assert.equal(backend.lists.length, before + 4, 'exact, paged and continued lists go to the storage')
  })

  it('hands every reader its own copy of a cached object', async (t) => {
    const { cache } = await cacheOver(t)
    const a = await cache.create(key('a'), cm('a', { app: 'web' }))
    const first = await cache.list(CM, { resourceVersion: String(rv(a)) })
    first.items[0]!.metadata.labels!['app'] = 'changed'
    const again = await cache.list(CM, { resourceVersion: '0' })
    assert.deepEqual(again.items, [a])
  })

  it('sends what it does not cache straight to the storage', async (t) => {
    const { backend, cache } = await cacheOver(t)
    const lists = backend.lists.length
    const watches = backend.watches.length
    await cache.list('/registry/pods/', { resourceVersion: '0' })
    cache.watch('/registry/pods/', { resourceVersion: '0' }).stop()
    assert.equal(backend.lists.length, lists + 1)
    assert.equal(backend.watches.length, watches + 1)
  })

  it('serves a watch without a resourceVersion from the cache, once it has caught up with the storage', async (t) => {
    const { backend, cache } = await cacheOver(t)
    await cache.create(key('before'), cm('before'))
    const watches = backend.watches.length
    const events = reader(cache.watch(CM))
    assert.deepEqual(summary([await events.next()]), ['ADDED before'], 'the current state first')
    await cache.create(key('after'), cm('after'))
    assert.deepEqual(summary([await events.next()]), ['ADDED after'])
    assert.equal(backend.watches.length, watches, 'no storage watch was opened for it')
  })

  it('ends a client that falls behind without holding up the others', async (t) => {
    const { cache } = await cacheOver(t, { watcherBufferSize: 3 })
    const start = String(await cache.currentRevision())
    const slow = reader(cache.watch(CM, { resourceVersion: start }))
    const fast = reader(cache.watch(CM, { resourceVersion: start }))
    const seen: string[] = []
    for (let i = 0; i < 10; i++) {
      await cache.create(key(`c${i}`), cm(`c${i}`))
      seen.push((await fast.next()).object.metadata.name ?? '')
    }
    assert.deepEqual(seen, ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9'])
    assert.deepEqual(summary(await slow.rest()), ['ADDED c0', 'ADDED c1', 'ADDED c2'], 'the slow client gets what was queued, then its watch ends')
    await cache.create(key('later'), cm('later'))
    assert.deepEqual(summary([await fast.next()]), ['ADDED later'])
  })

  it('serves a watch from before its window from the storage, which refuses it once compacted', async (t) => {
    const { backend, cache } = await cacheOver(t, { historySize: 2 })
    const first = await cache.create(key('a'), cm('a'))
    for (const n of ['b', 'c', 'd']) await cache.create(key(n), cm(n))
    // Reading at the last write's revision waits until the cache has seen it all.
    await cache.list(CM, { resourceVersion: String(await cache.currentRevision()) })
    const watches = backend.watches.length
    const replay = reader(cache.watch(CM, { resourceVersion: String(rv(first)) }))
    assert.deepEqual(summary([await replay.next(), await replay.next(), await replay.next()]), ['ADDED b', 'ADDED c', 'ADDED d'])
    assert.equal(backend.watches.length, watches + 1, 'the storage served it')

    const current = await cache.currentRevision()
    backend.inner.compact(current)
    cache.compact(current)
    const old = cache.watch(CM, { resourceVersion: String(rv(first)) })
    await assert.rejects(within(old[Symbol.asyncIterator]().next(), 'the watch error'), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.equal(err.code, 'Compacted')
      assert.equal(err.message, `too old resource version: ${rv(first)} (${current})`)
      return true
    })
  })

  it('waits for a not-older-than read until it catches up, else answers TooLargeResourceVersion', async (t) => {
    const { backend, cache } = await cacheOver(t, { freshnessTimeoutMs: 50 })
    const seen = await cache.create(key('a'), cm('a'))
    await cache.list(CM, { resourceVersion: String(rv(seen)) })
    backend.hold()
    const x = await cache.create(key('x'), cm('x'))
    await assert.rejects(cache.list(CM, { resourceVersion: String(rv(x)) }), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.equal(err.code, 'TooLargeResourceVersion')
      assert.equal(err.message, `${rv(x)}, current: ${rv(seen)}`)
      return true
    })
    backend.release()
    assert.deepEqual(names((await cache.list(CM, { resourceVersion: String(rv(x)) })).items), ['a', 'x'])
    const future = rv(x) + 100
    await assert.rejects(cache.list(CM, { resourceVersion: String(future) }), (err: unknown) => {
      assert.ok(err instanceof StorageError && err.code === 'TooLargeResourceVersion')
      assert.equal(err.message, `${future}, current: ${rv(x)}`, 'a revision the storage never reached is refused at once')
      return true
    })
  })

  it('asks its storage watch for a BOOKMARK when a read waits for a revision, without another watch', async (t) => {
    const { backend, cache } = await cacheOver(t, { progressIntervalMs: 5 })
    await cache.create(key('a'), cm('a'))
    const asked = backend.progressRequests
    const elsewhere = await cache.create(`${SECRETS}default/s`, cm('s'))
    const list = await cache.list(CM, { resourceVersion: String(rv(elsewhere)), resourceVersionMatch: 'NotOlderThan' })
    assert.deepEqual(names(list.items), ['a'])
    assert.ok(list.revision >= rv(elsewhere))
    assert.ok(backend.progressRequests > asked)
    // A consistent get after a write elsewhere: the same, from the cache.
    await cache.create(`${SECRETS}default/t`, cm('t'))
    assert.equal((await cache.get(key('a'), { readOnly: true }))?.metadata.name, 'a')
    assert.equal(backend.gets.length, 0)
    // One the server makes for itself inside a write reads the store.
    assert.equal((await cache.get(key('a')))?.metadata.name, 'a')
    assert.equal(backend.gets.length, 1)
    assert.deepEqual(backend.watches.filter((w) => w.prefix === CM).map((w) => w.opts.bookmarks === true), [false])
  })

  it('asks a storage whose watches take no such request for BOOKMARKs only while someone waits for a revision', async (t) => {
    const backend = new ObservedStorage()
    backend.answersProgressRequests = false
    const { cache } = await cacheOver(t, { progressIntervalMs: 5 }, backend)
    await cache.create(key('a'), cm('a'))
    const elsewhere = await cache.create(`${SECRETS}default/s`, cm('s'))
    const list = await cache.list(CM, { resourceVersion: String(rv(elsewhere)), resourceVersionMatch: 'NotOlderThan' })
    assert.deepEqual(names(list.items), ['a'])
    assert.ok(list.revision >= rv(elsewhere))
    const cmWatches = () => backend.watches.filter((w) => w.prefix === CM).map((w) => w.opts.bookmarks === true)
    await until('the storage watch without BOOKMARKs again', () => cmWatches().length === 3)
    assert.deepEqual(cmWatches(), [false, true, false])
  })

  it('answers a watch asked for while it still loads, once loaded', async (t) => {
    const backend = new ObservedStorage()
    await backend.create(key('a'), cm('a'))
    const cache = new WatchCache(backend)
    t.after(() => cache.close())
    cache.cacheResource(CM)
    const w = reader(cache.watch(CM, { resourceVersion: '0' }))
    assert.deepEqual(summary([await w.next()]), ['ADDED a'])
  })

  describe('when the storage fails', () => {
    function logs(): { logger: Logger; warnings: string[] } {
      const warnings: string[] = []
      const note = () => {}
      const warn = (fields: Record<string, unknown>, message: string) => warnings.push(`${String(fields['prefix'])}: ${message}`)
      return { warnings, logger: { debug: note, info: note, error: note, warn } }
    }

    it('loads again and keeps client watches when nothing changed meanwhile', async (t) => {
      const { logger, warnings } = logs()
      const { backend, cache } = await cacheOver(t, { retryDelayMs: 5, logger })
      await cache.create(key('a'), cm('a'))
      const w = reader(cache.watch(CM, { resourceVersion: String(await cache.currentRevision()) }))
      const watches = configmapWatches(backend)
      backend.outage()
      backend.restore()
      await until('a new storage watch', () => configmapWatches(backend) > watches)
      assert.deepEqual(warnings.sort(), [
        `${CM}: watch cache lost the backend; loading again`,
        `${SECRETS}: watch cache lost the backend; loading again`,
      ])
      await cache.create(key('b'), cm('b'))
      assert.deepEqual(summary([await w.next()]), ['ADDED b'])
    })

    it('ends the client watches that missed changes, and serves the new state', async (t) => {
      const { backend, cache } = await cacheOver(t, { retryDelayMs: 5 })
      await cache.create(key('a'), cm('a'))
      const w = reader(cache.watch(CM, { resourceVersion: String(await cache.currentRevision()) }))
      const watches = configmapWatches(backend)
      backend.outage()
      // Changes the cache cannot see, then a compaction: its revision is gone from the storage's history.
      await backend.inner.delete(key('a'))
      await backend.inner.create(key('b'), cm('b'))
      backend.inner.compact(await backend.currentRevision())
      backend.restore()
      assert.deepEqual(await w.rest(), [], 'the watch ends so that its client relists')
      await until('a new storage watch', () => configmapWatches(backend) > watches)
      assert.deepEqual(names((await cache.list(CM, { resourceVersion: '0' })).items), ['b'])
      const fresh = reader(cache.watch(CM, { resourceVersion: '0' }))
      assert.deepEqual(summary([await fresh.next()]), ['ADDED b'])
      await cache.create(key('c'), cm('c'))
      assert.deepEqual(summary([await fresh.next()]), ['ADDED c'])
    })
  })

  it('ends every client watch when it stops, and reads go to the storage afterwards', async (t) => {
    const { backend, cache } = await cacheOver(t)
    const w = reader(cache.watch(CM, { resourceVersion: '0' }))
    cache.stop()
    assert.deepEqual(await w.rest(), [])
    const lists = backend.lists.length
    await cache.list(CM, { resourceVersion: '0' })
    assert.equal(backend.lists.length, lists + 1)
  })
  it('lets a consumer poll a watch: the events in order, a call when more come, and the end', async (t) => {
    const { cache } = await cacheOver(t)
    const w = cache.watch(CM, { resourceVersion: String(await cache.currentRevision()) })
    assert.ok(w.poll && w.whenReady, 'a watch of the cache can be polled')
    assert.equal(w.poll(), undefined, 'nothing yet')
    let wakes = 0
    w.whenReady(() => wakes++)
    await cache.create(key('a'), cm('a'))
    await until('the first event', () => wakes === 1)
    const b = await cache.create(key('b'), cm('b'))
    // A read not older than the second write waits until the cache applied it (and offered it to its watches).
    await cache.list(CM, { resourceVersion: String(rv(b)), resourceVersionMatch: 'NotOlderThan' })
    assert.equal(wakes, 1, 'told once, until it polls again')
    const taken: string[] = []
    for (let r = w.poll(); r && !r.done; r = w.poll()) taken.push(`${r.value.type} ${r.value.object.metadata.name ?? ''}`)
    assert.deepEqual(taken, ['ADDED a', 'ADDED b'])
    w.whenReady(() => wakes++)
    w.stop()
    assert.equal(wakes, 2, 'told of the end')
    assert.deepEqual(w.poll(), { done: true, value: undefined })
  })
  it('follows the store for observers from the directory every cached prefix lies in', () => {
    assert.equal(commonDirectory(['/registry/secrets/', '/registry/configmaps/', '/registry/apps/deployments/']), '/registry/')
    assert.equal(commonDirectory(['/registry/configmaps/']), '/registry/configmaps/')
    assert.equal(commonDirectory(['/a/x/', '/b/y/']), '/')
    assert.equal(commonDirectory([]), '/')
  })

  describe('with startOnFirstUse', () => {
    const secret = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default', ...extra } })

    function lazyCache(t: TestContext) {
      const backend = new ObservedStorage()
      const observers = new Set<(object: KubeObject) => void>()
      const cache = new WatchCache(backend, { startOnFirstUse: true, observers })
      cache.cacheResource(CM)
      cache.cacheResource(SECRETS)
      t.after(() => cache.close())
      /** Adds an observer as the server's storage does (ServerStorage.observeObjects). */
      const observe = (observer: (object: KubeObject) => void = () => {}): void => {
        observers.add(observer)
        cache.tellHeld(observer)
      }
      return { backend, cache, observers, observe }
    }

    it('loads a resource with its first read or write, and no other', async (t) => {
      const { backend, cache } = lazyCache(t)
      await cache.loaded()
      assert.deepEqual(cache.cachedResources().sort(), [CM, SECRETS])
      assert.deepEqual([backend.lists.length, backend.watches.length], [0, 0], 'nothing loads at registration')
      await cache.list(CM, { resourceVersion: '0' })
      assert.deepEqual(backend.watches.map((w) => w.prefix), [CM])
      // A further read is the cache's: the store is not listed again.
      const lists = backend.lists.length
      await cache.list(CM, { resourceVersion: '0' })
      assert.equal(backend.lists.length, lists)
      await cache.create(`${SECRETS}default/token`, secret('token'))
      await until('the secrets cache watching', () => backend.watches.length === 2)
      assert.deepEqual(backend.watches.map((w) => w.prefix), [CM, SECRETS])
    })

    it('keeps in its window the changes from the first write on, as a cache loaded at start would', async (t) => {
      const { cache } = lazyCache(t)
      const first = await cache.create(key('c0'), cm('c0'))
      for (let i = 1; i < 5; i++) await cache.create(key(`c${i}`), cm(`c${i}`))
      const w = reader(cache.watch(CM, { resourceVersion: String(rv(first)) }))
      const events = [await w.next(), await w.next(), await w.next(), await w.next()]
      assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED c1', 'ADDED c2', 'ADDED c3', 'ADDED c4'])
    })

    it('tells observers of the objects of resources not loaded yet, stored before and written after, without loading them', async (t) => {
      const { backend, observe } = lazyCache(t)
      await backend.create(`${SECRETS}default/before`, secret('before'))
      const told: string[] = []
      observe((object) => void told.push(object.metadata.name ?? ''))
      await until('the stored object told', () => told.includes('before'))
      // Written behind the cache (another server on the same store): the cache's one watch of the store sees it.
      await backend.create(`${SECRETS}default/owned`, secret('owned', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'u1' }] }))
      await until('the written object told', () => told.includes('owned'))
      assert.deepEqual(backend.watches.map((w) => w.prefix), ['/registry/'], 'no resource loaded for the observer')
      assert.deepEqual(backend.lists.map((l) => l.prefix), ['/registry/'])
    })

    it('stops watching the store for its observers once every resource is loaded, or no one observes', async (t) => {
      const { backend, cache, observe } = lazyCache(t)
      observe()
      await until('the store watched', () => backend.openWatches() === 1)
      await cache.list(CM, {})
      await cache.list(SECRETS, {})
      // The next change ends the store-wide watch: the two caches' watches remain.
      await cache.create(key('a'), cm('a'))
      await until('the store-wide watch ended once every resource loaded', () => backend.openWatches() === 2)

      const second = lazyCache(t)
      second.observe()
      await until('the store watched', () => second.backend.openWatches() === 1)
      second.observers.clear()
      await second.backend.create(key('b'), cm('b'))
      await until('the store-wide watch ended with no one observing', () => second.backend.openWatches() === 0)
    })

    it('loads at once a resource registered while observers listen (a custom resource defined later)', async (t) => {
      const { backend, cache, observe } = lazyCache(t)
      observe()
      cache.cacheResource('/registry/example.com/widgets/')
      await until('the new resource watched', () => backend.watches.some((w) => w.prefix === '/registry/example.com/widgets/'))
    })

    it('tells observers again of what a restore of the store brings back', async (t) => {
      const { backend, observe } = lazyCache(t)
      await backend.create(`${SECRETS}default/kept`, secret('kept'))
      const snapshot = backend.inner.snapshot()
      const told: string[] = []
      observe((object) => void told.push(object.metadata.name ?? ''))
      await until('the stored object told', () => told.includes('kept'))
      await backend.create(`${SECRETS}default/later`, secret('later'))
      await until('the written object told', () => told.includes('later'))
      told.length = 0
      backend.inner.restore(snapshot)
      await until('the restored object told again', () => told.includes('kept'))
      await backend.create(`${SECRETS}default/after-restore`, secret('after-restore'))
      await until('a write after the restore told', () => told.includes('after-restore'))
    })
  })

  it('catches up with a restore of its store: the resource the restore changed listed again, the others moved on', async (t) => {
    const { backend, cache } = await cacheOver(t)
    await cache.create(key('kept'), cm('kept'))
    const secret = await cache.create(`${SECRETS}default/token`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: 'default' } })
    const snapshot = backend.inner.snapshot()
    await cache.create(key('written-by-test'), cm('written-by-test'))
    await within(cache.caughtUp(), 'the cache before the restore')
    const listsBefore = backend.lists.length
    backend.inner.restore(snapshot)
    await within(cache.caughtUp(), 'the cache after the restore')
    // Read at once, from memory: what the store holds now.
    const names = (await cache.list(CM, { resourceVersion: '0' })).items.map((o) => o.metadata.name)
    assert.deepEqual(names, ['kept'])
    const secrets = await cache.list(SECRETS, { resourceVersion: '0' })
    assert.deepEqual(secrets.items.map((o) => o.metadata.resourceVersion), [secret.metadata.resourceVersion])
    assert.equal(secrets.revision, await backend.currentRevision(), 'the untouched resource is at the new revision')
    assert.deepEqual(
      backend.lists.slice(listsBefore).map((l) => l.prefix),
      [CM],
      'only the changed resource is listed again',
    )
  })
})
