/**
 * The Lease API as upstream's conformance spec ("lease API should be
 * available") drives it: a Lease whose acquireTime and renewTime are early
 * MicroTimes (Go's zero time plus seconds) reads back equal to what was
 * written, whether the client speaks JSON or protobuf, and so do its updates
 * and patches.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeProtobuf, encodeProtobuf } from '../../core/encoding/protobuf.js'
import { startServer, type TestClient } from './harness.js'

const PROTOBUF = 'application/vnd.kubernetes.protobuf'
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases'

function leaseBody(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec }
}

/** A request and answer in protobuf, as client-go sends built-in kinds. */
async function protobufCall(api: TestClient, method: string, path: string, body?: Record<string, unknown>): Promise<{ status: number; object: any }> {
  const init: RequestInit = { method, headers: { accept: PROTOBUF, ...(body ? { 'content-type': PROTOBUF } : {}) } }
  if (body) init.body = encodeProtobuf(body) as NonNullable<RequestInit['body']>
  const res = await api.server.fetch(new Request(`http://in-process${path}`, init))
  const bytes = new Uint8Array(await res.arrayBuffer())
  return { status: res.status, object: res.headers.get('content-type') === PROTOBUF ? decodeProtobuf(bytes) : JSON.parse(new TextDecoder().decode(bytes)) }
}

const early = {
  holderIdentity: 'holder',
  leaseDurationSeconds: 30,
  acquireTime: '0001-01-01T00:00:02.000000Z',
  renewTime: '0001-01-01T00:00:05.000000Z',
  leaseTransitions: 0,
}

describe('Lease times as the conformance spec writes them', () => {
  it('reads back the early MicroTimes a protobuf client created, in protobuf and in JSON', async () => {
    const api = await startServer()
    const created = await protobufCall(api, 'POST', LEASES, leaseBody('early', early))
    assert.equal(created.status, 201, JSON.stringify(created.object))
    assert.deepEqual(created.object.spec, early)
    assert.deepEqual((await protobufCall(api, 'GET', `${LEASES}/early`)).object.spec, early)
    assert.deepEqual((await api.get(`${LEASES}/early`)).body.spec, early)
    const yaml = await api.get(`${LEASES}/early`, { headers: { accept: 'application/yaml' } })
    assert.match(yaml.text, /acquireTime: "0001-01-01T00:00:02\.000000Z"/)
    assert.match(yaml.text, /renewTime: "0001-01-01T00:00:05\.000000Z"/)
  })

  it('keeps later early times through an update and a merge patch, as the spec then does', async () => {
    const api = await startServer()
    assert.equal((await api.post(LEASES, leaseBody('moved', early))).status, 201)
    const current = (await protobufCall(api, 'GET', `${LEASES}/moved`)).object
    const updatedSpec = { ...early, holderIdentity: 'holder2', acquireTime: '0001-01-01T00:00:07.000000Z', renewTime: '0001-01-01T00:00:09.000000Z', leaseTransitions: 1 }
    const updated = await protobufCall(api, 'PUT', `${LEASES}/moved`, { ...current, spec: updatedSpec })
    assert.equal(updated.status, 200, JSON.stringify(updated.object))
    assert.deepEqual(updated.object.spec, updatedSpec)
    const patch = { spec: { holderIdentity: 'holder3', acquireTime: '0099-12-31T23:59:59.999999Z', renewTime: '0100-01-01T00:00:00.000001Z' } }
    const patched = await api.patch(`${LEASES}/moved`, patch, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    const expected = { ...updatedSpec, ...patch.spec }
    assert.deepEqual(patched.body.spec, expected)
    assert.deepEqual((await protobufCall(api, 'GET', `${LEASES}/moved`)).object.spec, expected)
    const listed = (await api.get(LEASES)).body.items.find((l: any) => l.metadata.name === 'moved')
    assert.deepEqual(listed.spec, expected)
  })

  it('refuses a renewTime without six fraction digits with 400 and stores nothing', async () => {
    const api = await startServer()
    const r = await api.post(LEASES, leaseBody('short', { ...early, renewTime: '0001-01-01T00:00:05Z' }))
    assert.equal(r.status, 400, r.text)
    assert.match(r.body.message, /parsing time "0001-01-01T00:00:05Z" as "2006-01-02T15:04:05\.000000Z07:00": cannot parse "Z" as "\.000000"/)
    assert.equal((await api.get(`${LEASES}/short`)).status, 404)
  })
})
