/** A client that reads a watch too slowly is cut off and counted, instead of growing the server's memory. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readEvents, startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const METRIC = 'apiserver_terminated_watchers_total{group="",resource="configmaps"}'

async function terminated(api: TestClient): Promise<number | undefined> {
  const text = (await api.get('/metrics')).text
  const line = text.split('\n').find((l) => l.startsWith(`${METRIC} `))
  return line === undefined ? undefined : Number(line.slice(METRIC.length + 1))
}

async function openWatch(api: TestClient): Promise<Response> {
  const list = await api.get(CM)
  const res = await api.server.fetch(new Request(`http://in-process${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`))
  assert.equal(res.status, 200)
  return res
}

for (const { watchCache, served } of [
  { watchCache: true, served: 'by the watch cache' },
  { watchCache: false, served: 'by the storage itself (watch cache off)' },
]) {
  describe(`slow watch clients of a watch served ${served}`, () => {
    it('ends a watch whose client falls more than the buffer behind, and counts it in /metrics', async () => {
      const api = await startServer({ watcherBufferSize: 10, watchCache })
      const res = await openWatch(api)
      // Nobody reads while 50 changes happen: the buffer of 10 overflows.
      for (let i = 0; i < 50; i++) assert.equal((await api.post(CM, { metadata: { name: `cm-${i}` } })).status, 201)
      const events = await readEvents(res, 50)
      assert.ok(events.length < 50, `a watch ${events.length} events long was not ended`)
      assert.ok(events.every((e) => e.type === 'ADDED'))
      assert.equal(await terminated(api), 1)
      assert.match((await api.get('/metrics')).text, /# TYPE apiserver_terminated_watchers_total counter/)
    })

    it('keeps a watch whose client keeps up, and counts nothing', async () => {
      const api = await startServer({ watcherBufferSize: 10, watchCache })
      const res = await openWatch(api)
      const reading = readEvents(res, 50)
      for (let i = 0; i < 50; i++) {
        assert.equal((await api.post(CM, { metadata: { name: `cm-${i}` } })).status, 201)
        // Let the reader take each event before the next change.
        await new Promise((resolve) => setImmediate(resolve))
      }
      const events = await reading
      assert.equal(events.length, 50)
      assert.deepEqual(
        events.map((e) => e.object.metadata.name),
        Array.from({ length: 50 }, (_, i) => `cm-${i}`),
      )
      assert.equal(await terminated(api), undefined)
    })
  })
}
