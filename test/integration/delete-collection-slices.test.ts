/**
 * A collection delete over objects already marked and held by their
 * finalizers writes nothing, so no step of it waits for I/O: it is run in
 * time slices, and another client's GET arriving after it is served first
 * (the namespace controller passes over a terminating namespace this way).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { besideAGet, startServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const HELD = 3000

describe('collection deletes in slices', { timeout: 120_000 }, () => {
  it(`serves a GET while a collection delete passes over ${HELD} held objects`, async () => {
    const api = await startServer()
    try {
      for (let i = 0; i < HELD; i++) {
        const made = await api.post(CM, { metadata: { name: `cm-${i}`, finalizers: ['example.com/hold'] } })
        assert.equal(made.status, 201, made.text)
      }
      const marked = await api.delete(CM)
      assert.equal(marked.status, 200, marked.text.slice(0, 300))
      assert.equal(marked.body.items.length, HELD)

      const { answer: second, order } = await besideAGet(api, () => api.delete(CM))
      assert.equal(second.status, 200, second.text.slice(0, 300))
      assert.equal(second.body.items.length, HELD, 'every held object is answered, still held')
      assert.ok(second.body.items.every((o: any) => o.metadata.deletionTimestamp && o.metadata.finalizers[0] === 'example.com/hold'))
      assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole collection delete')
    } finally {
      await api.server.shutdown()
    }
  })
})
