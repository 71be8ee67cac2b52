/**
 * A custom resource is checked against its schema in time slices: a large
 * object under a schema of many junctors (an `allOf` of 300 entries over
 * 3,000 items checks about a million values) is answered as before, while
 * another client's GET, arriving after it, is served first.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { installDefinition, widgetDefinition } from './crd-fixtures.js'
import { besideAGet, startServer } from './harness.js'

const GROUP = 'slices.example.com'
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`

describe('custom resource schema validation in slices', { timeout: 120_000 }, () => {
  it("refuses a large invalid object with every cause, while another client's GET is served first", async () => {
    const api = await startServer()
    try {
      const item = { type: 'integer', allOf: Array.from({ length: 300 }, (_, i) => ({ minimum: i === 299 ? 1 : 0 })) }
      const schema = { type: 'object', properties: { spec: { type: 'object', properties: { items: { type: 'array', items: item } } } } }
      await installDefinition(api, widgetDefinition(GROUP, schema))
      const body = { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'big' }, spec: { items: [...Array.from({ length: 2999 }, () => 5), 0] } }
      const { answer: created, order } = await besideAGet(api, () => api.post(WIDGETS, body))
      assert.equal(created.status, 422, created.text.slice(0, 300))
      assert.deepEqual(created.body.details.causes, [
        { reason: 'FieldValueInvalid', message: 'Invalid value: 0: spec.items[2999] in body should be greater than or equal to 1', field: 'spec.items[2999]' },
      ])
      assert.equal((await api.get(`${WIDGETS}/big`)).status, 404)
      assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole validation')
    } finally {
      await api.server.shutdown()
    }
  })
})
