/**
 * `namespaces/<name>/finalize`: a PUT of the Namespace changes its
 * spec.finalizers alone, as the namespace controller uses it; labels and
 * status in the body are ignored, a bad finalizer name is refused with 422
 * and nothing changes, and the other verbs are not allowed.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

describe('namespaces/NAME/finalize', () => {
  let client: TestClient

  before(async () => {
    client = await startServer()
    assert.equal((await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } })).status, 201)
  })

  it('stores the finalizers and metadata the PUT sends and keeps the stored status (upstream resets only the status)', async () => {
    const current = (await client.get('/api/v1/namespaces/team')).body
    assert.deepEqual(current.spec.finalizers, ['kubernetes'])
    const body = structuredClone(current)
    body.spec.finalizers = ['kubernetes', 'example.com/cleanup']
    body.metadata.labels = { sneaked: 'in' }
    body.status = { phase: 'Terminating' }
    const reply = await client.put('/api/v1/namespaces/team/finalize', body)
    assert.equal(reply.status, 200, reply.text)
    assert.deepEqual(reply.body.spec.finalizers, ['kubernetes', 'example.com/cleanup'])
    const stored = (await client.get('/api/v1/namespaces/team')).body
    assert.deepEqual(stored.spec.finalizers, ['kubernetes', 'example.com/cleanup'])
    assert.equal(stored.metadata.labels?.['sneaked'], 'in')
    assert.equal(stored.status.phase, 'Active')
  })

  it('refuses a finalizer name that is not qualified with 422, and stores nothing', async () => {
    const current = (await client.get('/api/v1/namespaces/team')).body
    const body = structuredClone(current)
    body.spec.finalizers = ['not a name!']
    const reply = await client.put('/api/v1/namespaces/team/finalize', body)
    assert.equal(reply.status, 422, reply.text)
    assert.equal(reply.body.reason, 'Invalid')
    const stored = (await client.get('/api/v1/namespaces/team')).body
    assert.deepEqual(stored.spec.finalizers, ['kubernetes', 'example.com/cleanup'])
    assert.equal(stored.metadata.resourceVersion, current.metadata.resourceVersion)
  })

  it('refuses a stale resourceVersion with 409 and keeps the stored finalizers', async () => {
    const current = (await client.get('/api/v1/namespaces/team')).body
    const body = structuredClone(current)
    body.metadata.resourceVersion = '1'
    body.spec.finalizers = []
    const reply = await client.put('/api/v1/namespaces/team/finalize', body)
    assert.equal(reply.status, 409)
    assert.deepEqual((await client.get('/api/v1/namespaces/team')).body.spec.finalizers, ['kubernetes', 'example.com/cleanup'])
  })

  it('does not allow a PATCH (405)', async () => {
    const reply = await client.patch('/api/v1/namespaces/team/finalize', { spec: { finalizers: [] } }, 'application/merge-patch+json')
    assert.equal(reply.status, 405)
  })
})
