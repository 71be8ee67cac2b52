import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage, type Storage } from '../../core/index.js'
import { watchTimeoutSeconds } from '../../core/endpoints/handlers.js'
import { createTestServer, readEvents, startServer, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

function watch(api: Awaited<ReturnType<typeof startServer>>, query: string, accept = 'application/json') {
  return api.server.fetch(new Request(`http://in-process${CM}?watch=true&${query}`, { headers: { accept } }))
}

async function serverOver(storage: Storage): Promise<TestClient> {
  const server = createTestServer({}, { storage })
  await server.ready
  return new TestClient(server)
}

describe('watch', () => {
  it('streams changes after the list\u2019s resourceVersion, one JSON event per line', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'before' } })
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/json')
    await api.post(CM, { metadata: { name: 'cfg' } })
    await api.patch(`${CM}/cfg`, { data: { a: 'b' } }, 'application/merge-patch+json')
    await api.delete(`${CM}/cfg`)
    const events = await readEvents(res, 3)
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'cfg'],
        ['MODIFIED', 'cfg'],
        ['DELETED', 'cfg'],
      ],
    )
    assert.equal(events[1]?.object.kind, 'ConfigMap')
    assert.deepEqual(events[1]?.object.data, { a: 'b' })
  })

  it('starts with ADDED events for what exists when no resourceVersion is given', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'a' } })
    await api.post(CM, { metadata: { name: 'b' } })
    const events = await readEvents(await watch(api, ''), 2)
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'a'],
        ['ADDED', 'b'],
      ],
    )
  })

  it('filters by label selector, turning a label change into ADDED and DELETED', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}&labelSelector=app%3Dweb`)
    await api.post(CM, { metadata: { name: 'other' } })
    await api.post(CM, { metadata: { name: 'cfg', labels: { app: 'db' } } })
    await api.patch(`${CM}/cfg`, { metadata: { labels: { app: 'web' } } }, 'application/merge-patch+json')
    await api.patch(`${CM}/cfg`, { metadata: { labels: { app: 'db' } } }, 'application/merge-patch+json')
    const events = await readEvents(res, 2)
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'cfg'],
        ['DELETED', 'cfg'],
      ],
    )
  })

  it('sends bookmarks when asked', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const [event] = await readEvents(await watch(api, `resourceVersion=${rv}&allowWatchBookmarks=true`), 1)
    assert.equal(event?.type, 'BOOKMARK')
    assert.equal(event?.object.kind, 'ConfigMap')
    assert.equal(event?.object.apiVersion, 'v1')
    assert.match(event?.object.metadata.resourceVersion, /^\d+$/)
  })

  it('streams Table events when kubectl get -w asks for them, with columns on the first only', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}`, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json')
    await api.post(CM, { metadata: { name: 'a' } })
    await api.post(CM, { metadata: { name: 'b' } })
    const [first, second] = await readEvents(res, 2)
    assert.equal(first?.object.kind, 'Table')
    assert.ok(first?.object.columnDefinitions)
    assert.equal(first?.object.rows[0].cells[0], 'a')
    // Left unset; Table's columnDefinitions has no omitempty, so Go writes it as null.
    assert.equal(second?.object.columnDefinitions, null)
    assert.equal(second?.object.rows[0].cells[0], 'b')
  })

  it('serves a watch from a revision the storage forgot, while the watch cache still holds it', async () => {
    const api = await serverOver(new MemoryStorage({ historyLimit: 5 }))
    const first = (await api.post(CM, { metadata: { name: 'c0' } })).body.metadata.resourceVersion
    for (let i = 1; i < 20; i++) await api.post(CM, { metadata: { name: `c${i}` } })
    const events = await readEvents(await watch(api, `resourceVersion=${first}`), 19)
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      Array.from({ length: 19 }, (_, i) => `ADDED c${i + 1}`),
    )
  })

  it('ends with a 410 Expired ERROR event when the resourceVersion is older than any kept history', async () => {
    const api = await serverOver(new MemoryStorage({ historyLimit: 5 }))
    // More changes than the watch cache keeps (1024) and than the storage keeps (5).
    for (let i = 0; i < 1100; i++) await api.post(CM, { metadata: { name: `c${i}` } })
    const res = await watch(api, 'resourceVersion=2')
    assert.equal(res.status, 200, 'a watch reports the expiry in its stream')
    const [event] = await readEvents(res, 1)
    assert.equal(event?.type, 'ERROR')
    assert.equal(event?.object.kind, 'Status')
    assert.equal(event?.object.code, 410)
    assert.equal(event?.object.reason, 'Expired')
    assert.match(event?.object.message, /^too old resource version: 2 \(\d+\)$/)
  })

  it('ends with the same 410 ERROR event when the watch cache is off', async () => {
    const storage = new MemoryStorage({ historyLimit: 5 })
    const server = createTestServer({ watchCache: false }, { storage })
    await server.ready
    const api = new TestClient(server)
    for (let i = 0; i < 20; i++) await api.post(CM, { metadata: { name: `c${i}` } })
    const [event] = await readEvents(await watch(api, 'resourceVersion=2'), 1)
    assert.equal(event?.type, 'ERROR')
    assert.equal(event?.object.code, 410)
    assert.match(event?.object.message, /^too old resource version: 2 \(\d+\)$/)
  })

  it('refuses a resourceVersion that is no number before the watch starts: a 500 Status in upstream\u2019s words, cache on or off', async () => {
    for (const watchCache of [true, false]) {
      const server = createTestServer({ watchCache })
      await server.ready
      const api = new TestClient(server)
      for (const rv of ['abc', '-1', '1.5']) {
        const res = await watch(api, `resourceVersion=${encodeURIComponent(rv)}`)
        assert.equal(res.status, 500, `watch cache ${watchCache}, resourceVersion ${rv}`)
        assert.deepEqual(await res.json(), {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`,
          code: 500,
        })
      }
      await server.shutdown()
    }
  })

  it('ends at the timeoutSeconds the client asks for', async () => {
    const api = await startServer()
    const res = await watch(api, 'timeoutSeconds=1')
    assert.deepEqual(await readEvents(res, 1), [])
  })

  it('keeps a watch open whose timeoutSeconds is beyond what a timer holds', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}&timeoutSeconds=99999999999`)
    // Past the moment a timer of that delay would have fired (at once, as one of 1 ms).
    await new Promise((resolve) => setTimeout(resolve, 20))
    await api.post(CM, { metadata: { name: 'after-a-long-timeout' } })
    const [event] = await readEvents(res, 1)
    assert.equal(event?.object?.metadata?.name, 'after-a-long-timeout')
    await api.server.shutdown()
  })

  it('picks a watch deadline as upstream: timeoutSeconds, else (also for 0) a random time in [min, 2*min]', () => {
    assert.equal(watchTimeoutSeconds(30, 1800, () => 0.5), 30)
    assert.equal(watchTimeoutSeconds(undefined, 1800, () => 0), 1800)
    assert.equal(watchTimeoutSeconds(undefined, 1800, () => 0.5), 2700)
    assert.equal(watchTimeoutSeconds(0, 1800, () => 0.999), 1800 * 1.999)
    assert.equal(watchTimeoutSeconds(undefined, 0, () => 0.5), 0, 'no minimum and no timeoutSeconds: the watch has no deadline')
    for (let i = 0; i < 100; i++) {
      const seconds = watchTimeoutSeconds(undefined, 60)
      assert.ok(seconds >= 60 && seconds < 120, `${seconds} lies in [60, 120)`)
    }
  })

  it('ends open watches when the server shuts down', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}`)
    await api.server.shutdown()
    assert.deepEqual(await readEvents(res, 1), [])
  })
})
