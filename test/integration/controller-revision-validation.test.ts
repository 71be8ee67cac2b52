/**
 * apps/v1 ControllerRevision validation against upstream's
 * (ValidateControllerRevision and its update rule): a revision carries its
 * data and a non-negative number; the number may change, the data may not.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const REVISIONS = '/apis/apps/v1/namespaces/default/controllerrevisions'
const invalid = (name: string, detail: string) => `ControllerRevision.apps "${name}" is invalid: ${detail}`

let api: TestClient
before(async () => {
  api = await startServer()
})
after(() => api.server.shutdown())

describe('ControllerRevision', () => {
  it('stores a revision with data and a number', async () => {
    const res = await api.post(REVISIONS, { metadata: { name: 'web-1' }, revision: 0, data: { spec: { template: {} } } })
    assert.equal(res.status, 201, res.text)
  })

  it('requires the data and a non-negative revision', async () => {
    for (const [name, body] of [
      ['no-data', { revision: -1 }],
      ['null-data', { revision: -1, data: null }],
    ] as const) {
      const res = await api.post(REVISIONS, { metadata: { name }, ...body })
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.message, invalid(name, '[data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]'))
      assert.equal((await api.get(`${REVISIONS}/${name}`)).status, 404)
    }
  })

  it('keeps the data as created, shown as upstream shows the bytes it holds', async () => {
    assert.equal((await api.post(REVISIONS, { metadata: { name: 'web-2' }, revision: 2, data: { any: 'thing' } })).status, 201)
    const path = `${REVISIONS}/web-2`
    const changed = await api.update(path, (cr) => ({ ...cr, data: { any: 'other' } }))
    assert.equal(changed.status, 422, changed.text)
    const bytes = [...Buffer.from('{"any":"other"}')].map((b) => `0x${b.toString(16)}`).join(', ')
    assert.equal(
      changed.body.message,
      invalid('web-2', `data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{${bytes}}, ContentEncoding:"", ContentType:"application/json"}: field is immutable`),
    )
    const dropped = await api.update(path, ({ data: _data, ...cr }) => ({ ...cr, revision: -2 }))
    assert.equal(dropped.status, 422, dropped.text)
    assert.equal(
      dropped.body.message,
      invalid('web-2', '[data: Required value: data is mandatory, revision: Invalid value: -2: must be greater than or equal to 0, data: Invalid value: "null": field is immutable]'),
    )
    assert.deepEqual((await api.get(path)).body.data, { any: 'thing' })
  })

  it('lets the revision number change', async () => {
    assert.equal((await api.post(REVISIONS, { metadata: { name: 'web-3' }, revision: 3, data: { any: 'thing' } })).status, 201)
    const res = await api.update(`${REVISIONS}/web-3`, (cr) => ({ ...cr, revision: 7 }))
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.revision, 7)
  })
})
