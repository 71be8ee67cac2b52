import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ConnectionInfo, createApiServer, MemoryStorage } from '../../core/index.js'
import { createTestServer, startServer, TestClient } from './harness.js'

const tokens = [{ token: 'secret-token', user: { username: 'alice', uid: '1', groups: ['dev'] } }]
/** A request that came over a transport (no embedded identity applies). */
const network: ConnectionInfo = {}
const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }

describe('authentication', () => {
  it('runs in-process calls as the embedded admin', async () => {
    const api = await startServer()
    const r = await api.post(whoami, review)
    assert.equal(r.status, 201)
    assert.deepEqual(r.body.status.userInfo, { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] })
  })

  it('treats an in-process call as anonymous unless the embedder opted in to an identity', async () => {
    const storage = new MemoryStorage()
    const configMap = { metadata: { name: 'x' } }
    // AlwaysAllow turns anonymous requests off: the call is refused, not run as an admin.
    const allowAll = new TestClient(createApiServer({}, { storage }))
    const refused = await allowAll.post('/api/v1/namespaces/default/configmaps', configMap)
    assert.equal(refused.status, 401)
    assert.equal(refused.body.reason, 'Unauthorized')
    await allowAll.server.shutdown()
    // With anonymous requests on, the authorizer sees system:anonymous.
    const denyAll = new TestClient(createApiServer({ authorizationModes: ['AlwaysDeny'] }, { storage }))
    const forbidden = await denyAll.post('/api/v1/namespaces/default/configmaps', configMap)
    assert.equal(forbidden.status, 403)
    assert.equal(
      forbidden.body.message,
      'configmaps is forbidden: User "system:anonymous" cannot create resource "configmaps" in API group "" in the namespace "default"',
    )
    await denyAll.server.shutdown()
    const admin = new TestClient(createTestServer({}, { storage }))
    assert.equal((await admin.get('/api/v1/namespaces/default/configmaps/x')).status, 404)
    await admin.server.shutdown()
  })

  it('refuses network requests without a credential with 401 while authorization is AlwaysAllow', async () => {
    const api = await startServer({ authentication: { tokens } })
    const r = await api.get('/api/v1/namespaces', { connection: network })
    assert.equal(r.status, 401)
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    })
  })

  it('authenticates a static token and adds system:authenticated', async () => {
    const api = await startServer({ authentication: { tokens } })
    const r = await api.post(whoami, review, { connection: network, headers: { authorization: 'Bearer secret-token' } })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body.status.userInfo, { username: 'alice', uid: '1', groups: ['dev', 'system:authenticated'] })
  })

  it('answers TokenReview from the same token chain as requests: the user a request with the token is', async () => {
    const api = await startServer({ authentication: { tokens } })
    const asRequest = await api.post(whoami, review, { connection: network, headers: { authorization: 'Bearer secret-token' } })
    const reviewed = await api.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'secret-token' },
    })
    assert.equal(reviewed.status, 201, reviewed.text)
    assert.equal(reviewed.body.status.authenticated, true)
    assert.deepEqual(reviewed.body.status.user, asRequest.body.status.userInfo)
  })

  it('refuses a wrong token with 401, never falling back to anonymous or the embedded identity', async () => {
    const api = await startServer({ authentication: { tokens, anonymous: true } })
    for (const connection of [network, undefined]) {
      const r = await api.get('/api/v1/namespaces', {
        headers: { authorization: 'Bearer wrong' },
        ...(connection ? { connection } : {}),
      })
      assert.equal(r.status, 401)
    }
  })

  it('takes the user from a verified client certificate: CN the name, O the groups', async () => {
    const api = await startServer()
    const connection: ConnectionInfo = {
      clientCertificate: { verified: true, commonName: 'bob', organizations: ['system:masters', 'ops'] },
    }
    const r = await api.post(whoami, review, { connection })
    assert.deepEqual(r.body.status.userInfo, { username: 'bob', groups: ['system:masters', 'ops', 'system:authenticated'] })
  })

  it('refuses a client certificate the transport could not verify with 401', async () => {
    const api = await startServer()
    const connection: ConnectionInfo = {
      clientCertificate: { verified: false, verifyError: 'UNABLE_TO_GET_ISSUER_CERT', commonName: 'mallory', organizations: [] },
    }
    assert.equal((await api.get('/api/v1/namespaces', { connection })).status, 401)
  })

  it('answers kubectl auth can-i with allowed under AlwaysAllow', async () => {
    const api = await startServer()
    const r = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } },
    })
    assert.equal(r.status, 201)
    assert.equal(r.body.status.allowed, true)
    assert.equal(r.body.kind, 'SelfSubjectAccessReview')
  })
})
