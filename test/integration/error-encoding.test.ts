/**
 * An error's Status in the encoding the request accepts, as upstream's
 * ErrorNegotiated writes it: YAML to a client that asks for YAML, protobuf to
 * one that accepts only protobuf, JSON otherwise, and JSON (never a 406 in
 * place of the error) when nothing the client names can carry it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import type { ApiServer } from '../../core/index.js'
import { decodeProtobuf } from '../../core/encoding/protobuf.js'
import { createTestServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

describe('error statuses in the negotiated encoding', () => {
  let server: ApiServer
  before(async () => {
    server = createTestServer()
    await server.ready
  })
  after(() => server.shutdown())

  const send = async (path: string, accept: string, init: RequestInit = {}) => {
    const res = await server.fetch(new Request(`http://in-process${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), accept } }))
    return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) }
  }
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
  const NOT_FOUND = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps "missing" not found', reason: 'NotFound', details: { name: 'missing', kind: 'configmaps' }, code: 404 }

  it('writes a 404 in YAML to a client that asks for YAML', async () => {
    const answer = await send(`${CM}/missing`, 'application/yaml')
    assert.equal(answer.status, 404)
    assert.equal(answer.type, 'application/yaml')
    assert.deepEqual(parse(text(answer.bytes)), NOT_FOUND)
  })

  it('writes a 422 with its causes in YAML', async () => {
    const answer = await send(CM, 'application/yaml', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'Not_Valid' } }) })
    assert.equal(answer.status, 422)
    assert.equal(answer.type, 'application/yaml')
    const status = parse(text(answer.bytes))
    assert.equal(status.reason, 'Invalid')
    assert.equal(status.details.causes[0].field, 'metadata.name')
    assert.equal((await send(`${CM}/Not_Valid`, 'application/json')).status, 404, 'nothing was stored')
  })

  it('writes a 404 in protobuf to a client that accepts only protobuf: the envelope, then the Status', async () => {
    const answer = await send(`${CM}/missing`, PROTOBUF)
    assert.equal(answer.status, 404)
    assert.equal(answer.type, PROTOBUF)
    assert.deepEqual([...answer.bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'the "k8s\\0" envelope')
    assert.deepEqual(decodeProtobuf(answer.bytes), NOT_FOUND)
  })

  it('writes JSON to a client that accepts JSON beside protobuf, as it answers objects', async () => {
    const answer = await send(`${CM}/missing`, `${PROTOBUF}, application/json`)
    assert.equal(answer.type, 'application/json')
    assert.deepEqual(JSON.parse(text(answer.bytes)), NOT_FOUND)
  })

  it('passes over a conversion it cannot make of a Status, and writes JSON when nothing else is acceptable', async () => {
    // A Table of a GET's answer is served; of its error there is none: the range is passed over, the next taken.
    const table = await send(`${CM}/missing`, 'application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml')
    assert.equal(table.status, 404)
    assert.equal(table.type, 'application/yaml')
    const tableOnly = await send(`${CM}/missing`, 'application/json;as=Table;v=v1;g=meta.k8s.io')
    assert.equal(tableOnly.status, 404)
    assert.equal(tableOnly.type, 'application/json')
    assert.deepEqual(JSON.parse(text(tableOnly.bytes)), NOT_FOUND)
  })

  it('writes a 406 in JSON for a client that accepts nothing this server writes', async () => {
    const answer = await send(`${CM}/missing`, 'text/html')
    assert.equal(answer.status, 406)
    assert.equal(answer.type, 'application/json')
    assert.equal(JSON.parse(text(answer.bytes)).reason, 'NotAcceptable')
  })
})
