import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer, MemoryStorage } from '../../core/index.js'
import { readEvents, startServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

function watch(api: Awaited<ReturnType<typeof startServer>>, query: string, accept = 'application/json') {
  return api.server.fetch(new Request(`http://in-process${CM}?watch=true&${query}`, { headers: { accept } }))
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
    assert.equal(second?.object.columnDefinitions, undefined)
    assert.equal(second?.object.rows[0].cells[0], 'b')
  })

  it('ends with a 410 Expired ERROR event when the resourceVersion is older than the kept history', async () => {
    const storage = new MemoryStorage({ historyLimit: 5 })
    const server = createApiServer({}, { storage })
    await server.ready
    const api = new (await import('./harness.js')).TestClient(server)
    for (let i = 0; i < 20; i++) await api.post(CM, { metadata: { name: `c${i}` } })
    const [event] = await readEvents(await watch(api, 'resourceVersion=2'), 1)
    assert.equal(event?.type, 'ERROR')
    assert.equal(event?.object.kind, 'Status')
    assert.equal(event?.object.code, 410)
    assert.equal(event?.object.reason, 'Expired')
    assert.match(event?.object.message, /^too old resource version: 2 \(\d+\)$/)
  })

  it('ends at timeoutSeconds', async () => {
    const api = await startServer()
    const res = await watch(api, 'timeoutSeconds=0')
    assert.deepEqual(await readEvents(res, 1), [])
  })

  it('ends open watches when the server shuts down', async () => {
    const api = await startServer()
    const rv = (await api.get(CM)).body.metadata.resourceVersion
    const res = await watch(api, `resourceVersion=${rv}`)
    await api.server.shutdown()
    assert.deepEqual(await readEvents(res, 1), [])
  })
})
