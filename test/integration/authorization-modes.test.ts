/**
 * The authorizer chain of `--authorization-mode`: AlwaysAllow and AlwaysDeny,
 * system:masters allowed before it, and any mode the server does not
 * implement refused instead of served as something weaker.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer } from '../../core/index.js'
import { startServer } from './harness.js'

const tokens = [
  { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
  { token: 'root-token', user: { username: 'root', groups: ['system:masters'] } },
]
const as = (token: string) => ({ connection: {}, headers: { authorization: `Bearer ${token}` } })
const configmap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } }

describe('authorization modes', () => {
  it('AlwaysDeny refuses every verb with upstream\'s 403 and stores nothing', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['AlwaysDeny'] })
    const list = await api.get('/api/v1/namespaces/default/configmaps', as('alice-token'))
    assert.equal(list.status, 403)
    assert.deepEqual(list.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'configmaps' },
      code: 403,
    })
    const create = await api.post('/api/v1/namespaces/default/configmaps', configmap, as('alice-token'))
    assert.equal(create.status, 403)
    const path = await api.get('/version', as('alice-token'))
    assert.equal(path.status, 403)
    assert.equal(path.body.message, 'forbidden: User "alice" cannot get path "/version"')
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/settings')).status, 404)
  })

  it('lets members of system:masters through before the chain, whatever it says', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['AlwaysDeny'] })
    const create = await api.post('/api/v1/namespaces/default/configmaps', configmap, as('root-token'))
    assert.equal(create.status, 201, create.text)
  })

  it('answers access reviews from the same chain', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['AlwaysDeny', 'AlwaysAllow'] })
    const review = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'default' } },
    }
    const denied = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review, as('root-token'))
    assert.equal(denied.body.status.allowed, true)
    const anonymous = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review, as('alice-token'))
    assert.equal(anonymous.status, 403)
  })

  it('refuses to build a server with a mode it does not implement, rather than allow everything', () => {
    for (const mode of ['Node', 'ABAC', 'Webhook', 'rbac']) {
      assert.throws(() => createApiServer({ authorizationModes: [mode] }), new RegExp(`authorization mode "${mode}" is not implemented yet`))
    }
  })
})
