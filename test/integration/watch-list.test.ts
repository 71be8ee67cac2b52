import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ApiServerOptions } from '../../core/index.js'
import { createTestServer, readEvents, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const STREAM = 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'
const INVALID = 'ListOptions.meta.k8s.io "" is invalid'

async function serve(options: ApiServerOptions = {}) {
  const server = createTestServer({ bookmarkIntervalMs: 60_000, ...options })
  await server.ready
  return new TestClient(server)
}

function get(api: TestClient, query: string) {
  return api.server.fetch(new Request(`http://in-process${CM}?${query}`))
}

const summary = (events: Array<{ type: string; object: any }>) =>
  events.map((e) => (e.type === 'BOOKMARK' ? `BOOKMARK ${e.object.metadata.resourceVersion}` : `${e.type} ${e.object.metadata.name}`))

for (const watchCache of [true, false]) {
  describe(`watch-list (sendInitialEvents) with the watch cache ${watchCache ? 'on' : 'off'}`, () => {
    it('streams the current objects, a BOOKMARK marking their end at their revision, then the changes', async () => {
      const api = await serve({ watchCache })
      await api.post(CM, { metadata: { name: 'b' } })
      const a = await api.post(CM, { metadata: { name: 'a' } })
      const latest = a.body.metadata.resourceVersion
      const res = await get(api, STREAM)
      assert.equal(res.status, 200)
      await api.post(CM, { metadata: { name: 'c' } })
      const events = await readEvents(res, 4)
      assert.deepEqual(summary(events), ['ADDED a', 'ADDED b', `BOOKMARK ${latest}`, 'ADDED c'])
      assert.deepEqual(events[0]!.object, a.body)
      const bookmark = events[2]!.object
      assert.deepEqual(bookmark, {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        // An empty object's ObjectMeta: Go writes its unset creationTimestamp as null.
        metadata: { resourceVersion: latest, creationTimestamp: null, annotations: { 'k8s.io/initial-events-end': 'true' } },
      })
      assert.ok(Number(events[3]!.object.metadata.resourceVersion) > Number(latest))
    })

    it('reads the initial state at resourceVersion 0 (any state) and at a revision (not older than it)', async () => {
      const api = await serve({ watchCache })
      const a = await api.post(CM, { metadata: { name: 'a' } })
      const rv = a.body.metadata.resourceVersion
      for (const query of [`${STREAM}&resourceVersion=0`, `${STREAM}&resourceVersion=${rv}`]) {
        const events = await readEvents(await get(api, query), 2)
        assert.equal(summary(events)[0], 'ADDED a', query)
        assert.equal(events[1]!.type, 'BOOKMARK')
        assert.ok(Number(events[1]!.object.metadata.resourceVersion) >= Number(rv), 'the state is not older than asked')
        assert.equal(events[1]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true')
      }
    })

    it('applies label selectors to the initial objects and to the changes', async () => {
      const api = await serve({ watchCache })
      await api.post(CM, { metadata: { name: 'web', labels: { app: 'web' } } })
      await api.post(CM, { metadata: { name: 'db', labels: { app: 'db' } } })
      const res = await get(api, `${STREAM}&labelSelector=app%3Dweb`)
      await api.post(CM, { metadata: { name: 'db2', labels: { app: 'db' } } })
      await api.post(CM, { metadata: { name: 'web2', labels: { app: 'web' } } })
      const events = await readEvents(res, 3)
      assert.deepEqual(summary(events).map((s) => s.replace(/^BOOKMARK \d+$/, 'BOOKMARK')), ['ADDED web', 'BOOKMARK', 'ADDED web2'])
    })

    it('sends the initial objects but no closing BOOKMARK to a client that does not allow bookmarks', async () => {
      const api = await serve({ watchCache })
      await api.post(CM, { metadata: { name: 'a' } })
      const res = await get(api, 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan')
      await api.post(CM, { metadata: { name: 'b' } })
      assert.deepEqual(summary(await readEvents(res, 2)), ['ADDED a', 'ADDED b'])
    })

    it('with sendInitialEvents=false streams only the changes, even from resourceVersion 0', async () => {
      const api = await serve({ watchCache })
      await api.post(CM, { metadata: { name: 'old' } })
      for (const query of ['', '&resourceVersion=0']) {
        const res = await get(api, `watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan${query}`)
        await api.post(CM, { metadata: { name: `new${query ? '0' : ''}` } })
        assert.deepEqual(summary(await readEvents(res, 1)), [`ADDED new${query ? '0' : ''}`])
      }
    })
  })
}

describe('watch-list parameters', () => {
  async function refused(query: string, message: string) {
    const api = await serve()
    const res = await api.get(`${CM}?${query}`)
    assert.equal(res.status, 422, query)
    assert.equal(res.body.reason, 'Invalid')
    assert.equal(res.body.message, message)
  }

  it('refuses sendInitialEvents without resourceVersionMatch=NotOlderThan', async () => {
    await refused(
      'watch=true&sendInitialEvents=true',
      `${INVALID}: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`,
    )
    await refused(
      'watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=5',
      `${INVALID}: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`,
    )
  })

  it('refuses resourceVersionMatch on a watch without sendInitialEvents', async () => {
    await refused(
      'watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan',
      `${INVALID}: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`,
    )
  })

  it('refuses sendInitialEvents on a list, whatever its value', async () => {
    for (const value of ['true', 'false']) {
      await refused(`sendInitialEvents=${value}`, `${INVALID}: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`)
    }
  })

  it('refuses resourceVersionMatch together with continue on a list', async () => {
    await refused(
      'resourceVersion=0&resourceVersionMatch=NotOlderThan&continue=abc',
      `${INVALID}: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`,
    )
  })
})
