import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ApiServerOptions, MemoryStorage } from '../../core/index.js'
import { ObservedStorage } from '../unit/storage/observed-storage.js'
import { createTestServer, readEvents, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const SECRETS = '/api/v1/namespaces/default/secrets'
const CM_PREFIX = '/registry/configmaps/'

async function serve(options: ApiServerOptions = {}, storage = new ObservedStorage()) {
  // The garbage collector reads every resource too; these tests count the watch cache's storage traffic alone.
  const server = createTestServer({ garbageCollector: false, ...options }, { storage })
  await server.ready
  return { api: new TestClient(server), storage }
}

function watch(api: TestClient, path: string, query: string) {
  return api.server.fetch(new Request(`http://in-process${path}?watch=true&${query}`))
}

const names = (body: { items: Array<{ metadata: { name: string } }> }) => body.items.map((i) => i.metadata.name)

describe('lists and watches through the watch cache', () => {
  it('answers a list and a get without resourceVersion from the cache once it holds every write the storage had: the latest write, at its revision or later', async () => {
    const { api, storage } = await serve()
    const created = await api.post(CM, { metadata: { name: 'a' } })
    const before = { lists: storage.lists.length }
    const list = await api.get(CM)
    assert.deepEqual(names(list.body), ['a'])
    assert.ok(Number(list.body.metadata.resourceVersion) >= Number(created.body.metadata.resourceVersion))
    const changed = await api.put(`${CM}/a`, { metadata: { name: 'a' }, data: { k: 'v' } })
    // The writes may read the storage themselves; the GETs below must not.
    const cmGets = () => storage.gets.filter((k) => k.startsWith(CM_PREFIX)).length
    let gets = cmGets()
    const got = await api.get(`${CM}/a`)
    assert.deepEqual(got.body.data, { k: 'v' })
    assert.equal(got.body.metadata.resourceVersion, changed.body.metadata.resourceVersion)
    assert.equal((await api.get(`${CM}/missing`)).status, 404)
    assert.equal(cmGets(), gets, 'no GET of a configmap reached the storage')
    await api.delete(`${CM}/a`)
    gets = cmGets()
    assert.equal((await api.get(`${CM}/a`)).status, 404, 'a read after a delete does not find it')
    assert.deepEqual(names((await api.get(CM)).body), [])
    assert.equal(cmGets(), gets, 'no GET of a configmap reached the storage')
    assert.equal(storage.lists.length, before.lists, 'no consistent list reached the storage')
  })

  it('answers resourceVersion=0 lists and watches from the cache, without reading the storage', async () => {
    const { api, storage } = await serve()
    const b = await api.post(CM, { metadata: { name: 'b', labels: { app: 'web' } } })
    await api.post(CM, { metadata: { name: 'a' } })
    // Not older than the last write: the cache answers once it has seen it.
    const fresh = await api.get(`${CM}?resourceVersion=${b.body.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`)
    assert.equal(fresh.status, 200)
    const lists = storage.lists.length
    const watches = storage.watches.length
    const any = await api.get(`${CM}?resourceVersion=0`)
    assert.deepEqual(names(any.body), ['a', 'b'])
    assert.deepEqual(names((await api.get(`${CM}?resourceVersion=0&labelSelector=app%3Dweb`)).body), ['b'])
    assert.deepEqual(names((await api.get(`${CM}?resourceVersion=0&fieldSelector=metadata.name%3Da`)).body), ['a'])
    assert.deepEqual(names((await api.get(`/api/v1/configmaps?resourceVersion=0&fieldSelector=metadata.namespace%3Ddefault`)).body), ['a', 'b'])
    const events = await readEvents(await watch(api, CM, 'resourceVersion=0'), 2)
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED a', 'ADDED b'],
    )
    assert.equal(storage.lists.length, lists, 'no list reached the storage')
    assert.equal(storage.watches.length, watches, 'no watch reached the storage')
  })

  it('reads an exact older state with resourceVersionMatch=Exact, and one at least as fresh with NotOlderThan', async () => {
    const { api } = await serve()
    const a = await api.post(CM, { metadata: { name: 'a' } })
    const rv = a.body.metadata.resourceVersion
    await api.post(CM, { metadata: { name: 'b' } })
    await api.delete(`${CM}/a`)
    const exact = await api.get(`${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact`)
    assert.deepEqual(names(exact.body), ['a'])
    assert.equal(exact.body.metadata.resourceVersion, rv)
    const notOlder = await api.get(`${CM}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)
    assert.equal(notOlder.status, 200)
    assert.ok(Number(notOlder.body.metadata.resourceVersion) >= Number(rv))
  })

  it('reads a page at a resourceVersion sent without resourceVersionMatch exactly there, as upstream pages for older clients', async () => {
    const memory = new MemoryStorage()
    const { api } = await serve({}, new ObservedStorage(memory))
    const a = await api.post(CM, { metadata: { name: 'a' } })
    const rv = a.body.metadata.resourceVersion
    await api.post(CM, { metadata: { name: 'b' } })
    await api.delete(`${CM}/a`)
    const page = await api.get(`${CM}?limit=1&resourceVersion=${rv}`)
    assert.deepEqual(names(page.body), ['a'], 'the state at that revision: a, before b existed and a was deleted')
    assert.equal(page.body.metadata.resourceVersion, rv)
    assert.equal(page.body.metadata.continue, undefined)
    // Without a limit, or at "0", the same resourceVersion means "not older than": the latest state.
    assert.deepEqual(names((await api.get(`${CM}?resourceVersion=${rv}`)).body), ['b'])
    assert.deepEqual(names((await api.get(`${CM}?limit=1&resourceVersion=0`)).body), ['b'])
    memory.compact(await memory.currentRevision())
    const compacted = await api.get(`${CM}?limit=1&resourceVersion=${rv}`)
    assert.equal(compacted.status, 410)
    assert.equal(compacted.body.message, 'The resourceVersion for the provided list is too old.')
  })

  it('answers a resourceVersion the storage has not reached with 504 Too large resource version', async () => {
    const { api } = await serve()
    const current = Number((await api.get(CM)).body.metadata.resourceVersion)
    const res = await api.get(`${CM}?resourceVersion=${current + 100}&resourceVersionMatch=NotOlderThan`)
    assert.equal(res.status, 504)
    assert.equal(res.body.reason, 'Timeout')
    // Controllers may write meanwhile: the current revision is at least the list's.
    const said = /^Timeout: Too large resource version: (\d+), current: (\d+)$/.exec(res.body.message)
    assert.ok(said, res.body.message)
    assert.equal(Number(said[1]), current + 100)
    assert.ok(Number(said[2]) >= current)
    assert.equal(res.body.details.retryAfterSeconds, 1)
  })

  it('pages with continue tokens, and answers an expired one with 410 and a token for the rest', async () => {
    const memory = new MemoryStorage()
    const { api } = await serve({}, new ObservedStorage(memory))
    for (const n of ['a', 'b', 'c']) await api.post(CM, { metadata: { name: n } })
    const first = await api.get(`${CM}?limit=1`)
    assert.deepEqual(names(first.body), ['a'])
    const second = await api.get(`${CM}?limit=1&continue=${first.body.metadata.continue}`)
    assert.deepEqual(names(second.body), ['b'])
    await api.patch(`${CM}/c`, { data: { x: 'y' } }, 'application/merge-patch+json')
    memory.compact(await memory.currentRevision())
    const expired = await api.get(`${CM}?limit=1&continue=${second.body.metadata.continue}`)
    assert.equal(expired.status, 410)
    assert.equal(expired.body.reason, 'Expired')
    assert.match(expired.body.message, /^The provided continue parameter is too old to display a consistent list result\./)
    const rest = await api.get(`${CM}?limit=1&continue=${expired.body.metadata.continue}`)
    assert.deepEqual(names(rest.body), ['c'])
    assert.deepEqual(rest.body.items[0].data, { x: 'y' }, 'the rest is read at the latest revision')
  })

  it('answers an exact list at a compacted revision with a plain 410', async () => {
    const memory = new MemoryStorage()
    const { api } = await serve({}, new ObservedStorage(memory))
    const a = await api.post(CM, { metadata: { name: 'a' } })
    await api.patch(`${CM}/a`, { data: { x: 'y' } }, 'application/merge-patch+json')
    memory.compact(await memory.currentRevision())
    const res = await api.get(`${CM}?resourceVersion=${a.body.metadata.resourceVersion}&resourceVersionMatch=Exact`)
    assert.equal(res.status, 410)
    assert.equal(res.body.reason, 'Expired')
    assert.equal(res.body.message, 'The resourceVersion for the provided list is too old.')
  })

  it('feeds every client watch of a resource from one storage watch', async () => {
    const { api, storage } = await serve()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => watch(api, CM, i % 2 ? `resourceVersion=${rv}` : 'resourceVersion=0')),
    )
    await api.post(CM, { metadata: { name: 'shared' } })
    for (const res of responses) {
      const [event] = await readEvents(res, 1)
      assert.equal(`${event?.type} ${event?.object.metadata.name}`, 'ADDED shared')
    }
    assert.equal(storage.watches.filter((w) => w.prefix === CM_PREFIX).length, 1, 'the one storage watch of the cache')
  })

  it('sends a resource whose --watch-cache-sizes entry is 0 straight to the storage', async () => {
    const { api, storage } = await serve({ watchCacheSizes: { secrets: 0, configmaps: 100 } })
    const lists = storage.lists.length
    await api.get(`${SECRETS}?resourceVersion=0`)
    assert.equal(storage.lists.length, lists + 1)
    await api.get(`${CM}?resourceVersion=0`)
    assert.equal(storage.lists.length, lists + 1, 'any size but 0 keeps the cache')
    assert.deepEqual(
      storage.watches.map((w) => w.prefix).filter((p) => p.includes('secrets') || p.includes('configmaps')),
      [CM_PREFIX],
      'only configmaps are cached',
    )
  })

  it('sends everything straight to the storage with --watch-cache=false', async () => {
    const { api, storage } = await serve({ watchCache: false })
    const lists = storage.lists.length
    await api.get(`${CM}?resourceVersion=0`)
    assert.equal(storage.lists.length, lists + 1)
    assert.deepEqual(storage.watches.map((w) => w.prefix).filter((p) => p === CM_PREFIX), [], 'no cache watches the storage')
  })
})
