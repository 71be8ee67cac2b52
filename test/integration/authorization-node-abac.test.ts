/**
 * The Node and ABAC modes through the whole server: kubelets (static-token
 * users `system:node:<name>` in `system:nodes`) read what their pods use and
 * nothing of other nodes', the graph follows pods as they are bound and
 * deleted; ABAC rules from a policy file allow per user, group and namespace.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadAbacPolicy } from '../../core/config/abac-policy.js'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { startServer } from './harness.js'

const kubelet = (node: string) => ({ token: `${node}-token`, user: { username: `system:node:${node}`, groups: ['system:nodes'] } })
const tokens = [
  kubelet('node-a'),
  kubelet('node-b'),
  // Claims a node's name without the group: an ordinary user.
  { token: 'forger-token', user: { username: 'system:node:node-a', groups: ['dev'] } },
  { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
  { token: 'bob-token', user: { username: 'bob', groups: ['ops'] } },
]
const as = (who: string) => ({ connection: {}, headers: { authorization: `Bearer ${who}-token` } })
const admin = {}

const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } })
const pod = (name: string, nodeName: string, secretName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName, containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 's', secret: { secretName } }] },
})

describe('Node authorizer through the server', () => {
  it('lets a kubelet read its pods and their secrets, and refuses another node\'s with 403', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['Node'], embeddedIdentity: ADMIN_IDENTITY })
    for (const s of ['a-secret', 'b-secret']) assert.equal((await api.post('/api/v1/namespaces/default/secrets', secret(s), admin)).status, 201)
    assert.equal((await api.post('/api/v1/namespaces/default/pods', pod('on-a', 'node-a', 'a-secret'), admin)).status, 201)
    assert.equal((await api.post('/api/v1/namespaces/default/pods', pod('on-b', 'node-b', 'b-secret'), admin)).status, 201)

    await eventually(async () => (await api.get('/api/v1/namespaces/default/pods/on-a', as('node-a'))).status === 200)
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/a-secret', as('node-a'))).status, 200)
    const listed = await api.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a', as('node-a'))
    assert.equal(listed.status, 200)
    assert.deepEqual(listed.body.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['on-a'])

    const otherPod = await api.get('/api/v1/namespaces/default/pods/on-b', as('node-a'))
    assert.equal(otherPod.status, 403)
    assert.equal(
      otherPod.body.message,
      'pods "on-b" is forbidden: User "system:node:node-a" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node \'node-a\' and this object',
    )
    const otherSecret = await api.get('/api/v1/namespaces/default/secrets/b-secret', as('node-a'))
    assert.equal(otherSecret.status, 403)
    assert.equal((await api.get('/api/v1/pods', as('node-a'))).status, 403)
  })

  it('does not take a system:node: name without the system:nodes group for a node', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['Node'], embeddedIdentity: ADMIN_IDENTITY })
    await api.post('/api/v1/namespaces/default/secrets', secret('a-secret'), admin)
    await api.post('/api/v1/namespaces/default/pods', pod('on-a', 'node-a', 'a-secret'), admin)
    const forged = await api.get('/api/v1/namespaces/default/secrets/a-secret', as('forger'))
    assert.equal(forged.status, 403)
    assert.equal(forged.body.message, 'secrets "a-secret" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "default"')
  })

  it('follows pods as they are deleted: their secrets are no longer the node\'s to read', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['Node'], embeddedIdentity: ADMIN_IDENTITY })
    await api.post('/api/v1/namespaces/default/secrets', secret('a-secret'), admin)
    await api.post('/api/v1/namespaces/default/pods', pod('on-a', 'node-a', 'a-secret'), admin)
    await eventually(async () => (await api.get('/api/v1/namespaces/default/secrets/a-secret', as('node-a'))).status === 200)
    assert.equal((await api.delete('/api/v1/namespaces/default/pods/on-a?gracePeriodSeconds=0', admin)).status, 200)
    await eventually(async () => (await api.get('/api/v1/namespaces/default/secrets/a-secret', as('node-a'))).status === 403)
  })

  it('grants a node nothing through a mirror pod but the pod itself: neither the claim of its ephemeral volume nor a resource claim', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['Node'], embeddedIdentity: ADMIN_IDENTITY })
    const ns = '/api/v1/namespaces/default'
    const claimSpec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }
    assert.equal((await api.post(`${ns}/persistentvolumeclaims`, { metadata: { name: 'mirror-data' }, spec: claimSpec }, admin)).status, 201)
    const mirror = {
      metadata: { name: 'mirror', annotations: { 'kubernetes.io/config.mirror': 'hash' } },
      spec: {
        nodeName: 'node-a',
        containers: [{ name: 'c', image: 'nginx' }],
        // An ephemeral volume's claim is named <pod>-<volume>: any claim whose name has a dash.
        volumes: [{ name: 'data', ephemeral: { volumeClaimTemplate: { spec: claimSpec } } }],
        resourceClaims: [{ name: 'rc', resourceClaimName: 'victim' }],
      },
    }
    const created = await api.post(`${ns}/pods`, mirror, admin)
    assert.equal(created.status, 201, created.text)
    await eventually(async () => (await api.get(`${ns}/pods/mirror`, as('node-a'))).status === 200)
    assert.equal((await api.get(`${ns}/persistentvolumeclaims/mirror-data`, as('node-a'))).status, 403)
    assert.equal((await api.get('/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/victim', as('node-a'))).status, 403)
  })

  it('lets a kubelet keep its own Lease and Node status, not another node\'s', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['Node'], embeddedIdentity: ADMIN_IDENTITY })
    const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } })
    const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases'
    assert.equal((await api.post(leases, lease('node-a'), as('node-a'))).status, 201)
    assert.equal((await api.get(`${leases}/node-a`, as('node-a'))).status, 200)
    assert.equal((await api.get(`${leases}/node-a`, as('node-b'))).status, 403)
    assert.equal((await api.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } }, as('node-a'))).status, 201)
    assert.equal((await api.get('/api/v1/nodes/node-a', as('node-a'))).status, 200)
    assert.equal((await api.get('/api/v1/nodes/node-a', as('node-b'))).status, 403)
  })
})

/** The graph follows a watch: wait for it to catch up (no time is asserted). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail('the condition never held')
}

describe('ABAC through the server', () => {
  const rule = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })
  const policy = loadAbacPolicy(
    [
      rule({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' }),
      rule({ group: 'ops', namespace: '*', resource: 'configmaps', apiGroup: '', readonly: true }),
    ].join('\n'),
    'policy.jsonl',
  )

  it('allows what a rule matches and refuses the rest with 403, storing nothing', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['ABAC'], authorizationPolicy: policy, embeddedIdentity: ADMIN_IDENTITY })
    await api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }, admin)
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } }
    assert.equal((await api.post('/api/v1/namespaces/team-a/configmaps', cm, as('alice'))).status, 201)
    const elsewhere = await api.post('/api/v1/namespaces/default/configmaps', cm, as('alice'))
    assert.equal(elsewhere.status, 403)
    assert.equal(
      elsewhere.body.message,
      'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default": No policy matched.',
    )
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/settings', admin)).status, 404)
    assert.equal((await api.get('/api/v1/namespaces/team-a/configmaps/settings', as('bob'))).status, 200)
    const write = await api.delete('/api/v1/namespaces/team-a/configmaps/settings', as('bob'))
    assert.equal(write.status, 403)
    assert.equal((await api.get('/api/v1/namespaces/team-a/configmaps/settings', admin)).status, 200)
  })
})
