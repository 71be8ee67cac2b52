/**
 * Discovery with a trailing slash, as upstream serves it: `/api/`, `/apis/`,
 * `/apis/<group>/` and the version documents answer as without the slash
 * (`/apis/` always with the plain APIGroupList), and authorization sees the
 * path as sent.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ConnectionInfo, createApiServer } from '../../core/index.js'
import { startServer, type TestClient } from './harness.js'

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json'

describe('discovery paths with a trailing slash', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })
  after(() => api.server.shutdown())

  it('validates the preferred version of each group of /apis/ at /apis/<group>/ (the conformance spec)', async () => {
    const list = await api.get('/apis/')
    assert.equal(list.status, 200, list.text)
    assert.equal(list.body.kind, 'APIGroupList')
    assert.ok(list.body.groups.length > 10)
    for (const group of list.body.groups) {
      const one = await api.get(`/apis/${group.name}/`)
      assert.equal(one.status, 200, `${group.name}: ${one.text}`)
      assert.equal(one.body.kind, 'APIGroup')
      assert.equal(one.body.name, group.name)
      assert.deepEqual(one.body.preferredVersion, group.preferredVersion)
      assert.ok(
        one.body.versions.some((v: { groupVersion: string }) => v.groupVersion === group.preferredVersion.groupVersion),
        `${group.name}: the preferred version is one of its versions`,
      )
    }
  })

  it('answers each document as its path without the slash', async () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/rbac.authorization.k8s.io/v1', '/version']) {
      const plain = await api.get(path)
      const slashed = await api.get(`${path}/`)
      assert.equal(slashed.status, 200, `${path}/: ${slashed.text}`)
      assert.deepEqual(slashed.body, plain.body, path)
    }
  })

  it('serves the aggregated document at /api/ as at /api, and only the plain list at /apis/', async () => {
    const legacy = await api.get('/api/', { headers: { accept: AGGREGATED } })
    assert.equal(legacy.body.kind, 'APIGroupDiscoveryList')
    const groups = await api.get('/apis/', { headers: { accept: AGGREGATED } })
    assert.equal(groups.status, 200)
    assert.equal(groups.body.kind, 'APIGroupList')
  })

  it('answers 404 for a group or version it does not serve, slash or not', async () => {
    for (const path of ['/apis/nope.example.com/', '/apis/apps/v9/', '/api/v9/']) {
      const reply = await api.get(path)
      assert.equal(reply.status, 404, path)
      assert.equal(reply.body.reason, 'NotFound', path)
    }
  })
})

describe('authorization of discovery paths with a trailing slash', () => {
  /** Over a transport: no embedded identity applies. */
  const network: ConnectionInfo = {}
  const tokens = [{ token: 'alice-token', user: { username: 'alice', groups: [] } }]

  it('asks the authorizer about the path as sent, "/apis/" (RBAC: anonymous refused, authenticated users allowed by system:discovery)', async () => {
    const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] })
    await server.ready
    const call = (path: string, token?: string) =>
      server.fetch(new Request(`http://in-process${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }), network)
    try {
      for (const path of ['/apis/', '/api/', '/apis/apps/', '/apis/apps/v1/']) {
        const anonymous = await call(path)
        assert.equal(anonymous.status, 403, path)
        assert.equal(((await anonymous.json()) as { message: string }).message, `forbidden: User "system:anonymous" cannot get path "${path}"`)
        assert.equal((await call(path, 'alice-token')).status, 200, path)
      }
      // system:public-info-viewer names /version/ beside /version.
      assert.equal((await call('/version/')).status, 200)
    } finally {
      await server.shutdown()
    }
  })

  it('refuses with the path as sent when the authorizer denies everything', async () => {
    const server = createApiServer({ authentication: { tokens }, authorizationModes: ['AlwaysDeny'] })
    await server.ready
    try {
      const reply = await server.fetch(new Request('http://in-process/apis/', { headers: { authorization: 'Bearer alice-token' } }), network)
      assert.equal(reply.status, 403)
      assert.equal(((await reply.json()) as { message: string }).message, 'forbidden: User "alice" cannot get path "/apis/"')
    } finally {
      await server.shutdown()
    }
  })
})
