/**
 * Impersonation through `fetch`, with static-token users: under AlwaysDeny
 * only system:masters may do anything, so an administrator may impersonate
 * and anyone else is refused; the 403 messages say who the server thinks
 * the caller is.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ConnectionInfo } from '../../core/index.js'
import { startServer, type TestClient } from './harness.js'

const network: ConnectionInfo = {}
const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
]
const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }
const configMaps = '/api/v1/namespaces/default/configmaps'

const start = () => startServer({ authorizationModes: ['AlwaysDeny'], authentication: { tokens } })
const as = (token: string, headers: Record<string, string>) => ({ connection: network, headers: { authorization: `Bearer ${token}`, ...headers } })

async function assertNotStored(api: TestClient, name: string): Promise<void> {
  assert.equal((await api.get(`${configMaps}/${name}`)).status, 404)
}

describe('impersonation', () => {
  it('runs the request as the impersonated user, groups, uid and extras, system:authenticated added', async () => {
    const api = await start()
    const r = await api.post(
      whoami,
      review,
      as('admin-token', {
        'impersonate-user': 'bob',
        'impersonate-group': 'system:masters, ops',
        'impersonate-uid': 'b-1',
        'impersonate-extra-scopes': 'view, edit',
        'impersonate-extra-acme.com%2fteam': 'blue',
      }),
    )
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status.userInfo, {
      username: 'bob',
      uid: 'b-1',
      groups: ['system:masters', 'ops', 'system:authenticated'],
      extra: { 'acme.com/team': ['blue'], scopes: ['view', 'edit'] },
    })
  })

  it('authorizes the impersonated user, not the impersonator', async () => {
    const api = await start()
    const r = await api.post(configMaps, { metadata: { name: 'as-bob' } }, as('admin-token', { 'impersonate-user': 'bob' }))
    assert.equal(r.status, 403)
    assert.equal(r.body.message, 'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default"')
    await assertNotStored(api, 'as-bob')
  })

  it('gives an impersonated service account its groups unless groups are named', async () => {
    const api = await start()
    const sa = 'system:serviceaccount:team-a:builder'
    const withGroups = await api.post(whoami, review, as('admin-token', { 'impersonate-user': sa, 'impersonate-group': 'system:masters' }))
    assert.equal(withGroups.status, 201, withGroups.text)
    assert.deepEqual(withGroups.body.status.userInfo, { username: sa, groups: ['system:masters', 'system:authenticated'] })
    const denied = await api.get('/api/v1/namespaces', as('admin-token', { 'impersonate-user': sa }))
    assert.equal(denied.status, 403)
    assert.match(denied.body.message, /User "system:serviceaccount:team-a:builder" cannot list/)
  })

  it('refuses a user without the right to impersonate with 403 naming the user asked for, and stores nothing', async () => {
    const api = await start()
    const r = await api.post(configMaps, { metadata: { name: 'stolen' } }, as('alice-token', { 'impersonate-user': 'root', 'impersonate-group': 'system:masters' }))
    assert.equal(r.status, 403)
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'users "root" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      reason: 'Forbidden',
      details: { name: 'root', kind: 'users' },
      code: 403,
    })
    await assertNotStored(api, 'stolen')
  })

  it('names the namespace when a service account may not be impersonated', async () => {
    const api = await start()
    const r = await api.get('/api/v1/namespaces', as('alice-token', { 'impersonate-user': 'system:serviceaccount:kube-system:admin' }))
    assert.equal(r.status, 403)
    assert.equal(
      r.body.message,
      'serviceaccounts "admin" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"',
    )
  })

  it('refuses groups, a uid or extras without a user with 400, as upstream does', async () => {
    const api = await start()
    const r = await api.post(configMaps, { metadata: { name: 'no-user' } }, as('admin-token', { 'impersonate-group': 'system:masters' }))
    assert.equal(r.status, 400)
    assert.equal(r.body.reason, 'BadRequest')
    assert.equal(r.body.message, 'requested [{Group  system:masters    }] without impersonating a user')
    const uid = await api.get('/api/v1/namespaces', as('admin-token', { 'impersonate-uid': 'u-1' }))
    assert.equal(uid.status, 400)
    assert.equal(uid.body.message, 'requested [{UID  u-1  authentication.k8s.io/v1  }] without impersonating a user')
    await assertNotStored(api, 'no-user')
  })

  it('gives an impersonated system:anonymous system:unauthenticated, not system:authenticated', async () => {
    const api = await start()
    const r = await api.post(whoami, review, as('admin-token', { 'impersonate-user': 'system:anonymous', 'impersonate-group': 'system:masters' }))
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status.userInfo, { username: 'system:anonymous', groups: ['system:masters', 'system:unauthenticated'] })
  })
})
