/**
 * Map keys that name Object.prototype's members (`__proto__`, `constructor`)
 * are data like any other, as upstream's Go maps hold them: kept by server-side
 * apply and by protobuf bodies, validated as on create, and never seen as
 * changed by an apply that does not touch them.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { buildLastApplied } from '../../core/apply/last-applied.js'
import { decodeProtobuf, encodeProtobuf } from '../../core/encoding/protobuf.js'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const APPLY = { 'content-type': 'application/apply-patch+yaml' }
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

/** A ConfigMap as JSON text: JSON.parse (and the server's decoders) make `__proto__` an own key. */
const configMap = (name: string, data: string, labels = '') =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"${labels ? `,"labels":${labels}` : ''}},"data":${data}}`

type Entry = { manager: string; fieldsV1: { 'f:data'?: Record<string, unknown> } }
const dataFields = (body: { metadata: { managedFields: Entry[] } }, manager: string): string[] =>
  Object.keys(body.metadata.managedFields.find((e) => e.manager === manager)?.fieldsV1['f:data'] ?? {}).sort()

describe('map keys named like Object.prototype members', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  const apply = (name: string, body: string, query = '') => client.call('PATCH', `${CM}/${name}?fieldManager=m${query}`, { body, headers: APPLY })

  it('stores an applied data.__proto__ as the key it is, owned by the applier', async () => {
    const res = await apply('applied', configMap('applied', '{"__proto__":"a","b":"c"}'))
    assert.equal(res.status, 201, res.text)
    const got = await client.call('GET', `${CM}/applied`)
    assert.deepEqual(got.body.data, JSON.parse('{"__proto__":"a","b":"c"}'))
    assert.ok(Object.hasOwn(got.body.data, '__proto__'))
    assert.deepEqual(dataFields(got.body, 'm'), ['f:__proto__', 'f:b'])
  })

  it('refuses an applied label key __proto__ as create does', async () => {
    const created = await client.call('POST', CM, { body: configMap('label', '{}', '{"__proto__":"v"}') })
    assert.equal(created.status, 422, created.text)
    const applied = await apply('label', configMap('label', '{}', '{"__proto__":"v"}'))
    assert.equal(applied.status, 422, applied.text)
    assert.equal(applied.body.message, created.body.message)
  })

  it('leaves another manager’s __proto__ and constructor keys alone when applying other keys', async () => {
    const created = await client.call('POST', CM, { body: configMap('shared', '{"__proto__":"keep","constructor":"c","b":"c"}') })
    assert.equal(created.status, 201, created.text)
    const res = await apply('shared', configMap('shared', '{"z":"1"}'))
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.data, JSON.parse('{"__proto__":"keep","b":"c","constructor":"c","z":"1"}'))
    assert.deepEqual(dataFields(res.body, 'm'), ['f:z'])

    // taken over with force, then no longer applied: gone, as any key the applier alone owned
    const taken = await apply('shared', configMap('shared', '{"z":"1","__proto__":"mine"}'), '&force=true')
    assert.equal(taken.status, 200, taken.text)
    assert.equal(taken.body.data.__proto__, 'mine')
    const dropped = await apply('shared', configMap('shared', '{"z":"1"}'))
    assert.equal(dropped.status, 200, dropped.text)
    assert.deepEqual(dropped.body.data, { b: 'c', constructor: 'c', z: '1' })
  })

  it('keeps a __proto__ key in the last-applied annotation written for kubectl', () => {
    const text = buildLastApplied(JSON.parse(configMap('kubectl', '{"__proto__":"a","b":"c"}')) as Record<string, unknown>)
    assert.deepEqual(JSON.parse(text).data, JSON.parse('{"__proto__":"a","b":"c"}'))
  })

  it('keeps a __proto__ map entry of a protobuf body, and writes it back in protobuf', async () => {
    const sent = JSON.parse(configMap('proto', '{"__proto__":"x","b":"c"}')) as Record<string, unknown>
    const res = await client.call('POST', CM, { body: encodeProtobuf(sent), headers: { 'content-type': PROTOBUF } })
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(res.body.data, JSON.parse('{"__proto__":"x","b":"c"}'))
    const got = await client.server.fetch(new Request(`http://in-process${CM}/proto`, { headers: { accept: PROTOBUF } }))
    const decoded = decodeProtobuf(new Uint8Array(await got.arrayBuffer()))
    assert.deepEqual(decoded['data'], JSON.parse('{"__proto__":"x","b":"c"}'))
  })
})
