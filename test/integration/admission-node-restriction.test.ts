/**
 * NodeRestriction attacks: a kubelet (token user `system:node:n1` in
 * `system:nodes`) is allowed everything by authorization here, so that each
 * refusal is the plugin's: it may not touch another node or its pods, set
 * labels reserved to administrators, change its taints, or create a pod that
 * is not its own mirror pod. Every refusal is 403 and stores nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const tokens = [
  { token: 'n1-token', user: { username: 'system:node:n1', groups: ['system:nodes'] } },
  { token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } },
]
const kubelet = { connection: {}, headers: { authorization: 'Bearer n1-token' } }
const MERGE = 'application/merge-patch+json'
const PODS = '/api/v1/namespaces/default/pods'

async function cluster(): Promise<TestClient> {
  const api = await startServer({ authentication: { tokens }, authorizationModes: ['AlwaysAllow'], admission: { plugins: ['NodeRestriction'] } })
  for (const name of ['n1', 'n2']) assert.equal((await api.post('/api/v1/nodes', { metadata: { name, labels: { team: 'a' } } })).status, 201)
  for (const [name, nodeName] of [['on-n1', 'n1'], ['on-n2', 'n2']])
    assert.equal((await api.post(PODS, { metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] } })).status, 201)
  return api
}

function assertForbidden(res: { status: number; body: any }, message: string): void {
  assert.equal(res.status, 403, JSON.stringify(res.body))
  assert.equal(res.body.reason, 'Forbidden')
  assert.equal(res.body.message, message)
}

describe('NodeRestriction', () => {
  it("refuses a kubelet's change to another node and leaves it as it was", async () => {
    const api = await cluster()
    const before = (await api.get('/api/v1/nodes/n2')).body
    const res = await api.patch('/api/v1/nodes/n2', { metadata: { labels: { team: 'b' } } }, MERGE, kubelet)
    assertForbidden(res, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
    assertForbidden(await api.delete('/api/v1/nodes/n2', kubelet), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
    assert.deepEqual((await api.get('/api/v1/nodes/n2')).body, before)
  })

  it('refuses labels reserved to administrators and taint changes on its own node, and allows kubelet labels', async () => {
    const api = await cluster()
    const reserved = await api.patch('/api/v1/nodes/n1', { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'gpu' } } }, MERGE, kubelet)
    assertForbidden(reserved, 'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool')
    const unknown = await api.patch('/api/v1/nodes/n1', { metadata: { labels: { 'kubernetes.io/role': 'master' } } }, MERGE, kubelet)
    assertForbidden(unknown, 'nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/role')
    const taints = await api.patch('/api/v1/nodes/n1', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }, MERGE, kubelet)
    assertForbidden(taints, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints')
    assert.deepEqual((await api.get('/api/v1/nodes/n1')).body.metadata.labels, { team: 'a' })
    const allowed = await api.patch('/api/v1/nodes/n1', { metadata: { labels: { 'node.kubernetes.io/instance-type': 'big', own: 'x' } } }, MERGE, kubelet)
    assert.equal(allowed.status, 200)
  })

  it('refuses owner references a kubelet sets on its own node, by each kind of write (CVE-2025-5187)', async () => {
    const api = await cluster()
    const before = (await api.get('/api/v1/nodes/n1')).body
    // An owner that does not exist: the garbage collector would delete the node.
    const owner = { apiVersion: 'v1', kind: 'Node', name: 'gone', uid: '00000000-0000-0000-0000-000000000001' }
    const message = 'nodes "n1" is forbidden: node "n1" is not allowed to modify ownerReferences'
    assertForbidden(await api.patch('/api/v1/nodes/n1', { metadata: { ownerReferences: [owner] } }, MERGE, kubelet), message)
    const put = { ...before, metadata: { ...before.metadata, ownerReferences: [owner] } }
    assertForbidden(await api.put('/api/v1/nodes/n1', put, kubelet), message)
    const apply = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', ownerReferences: [owner] } }
    assertForbidden(await api.patch('/api/v1/nodes/n1?fieldManager=kubelet&force=true', apply, 'application/apply-patch+yaml', kubelet), message)
    assert.deepEqual((await api.get('/api/v1/nodes/n1')).body.metadata.ownerReferences, undefined)
    // An empty list is no change.
    assert.equal((await api.patch('/api/v1/nodes/n1', { metadata: { ownerReferences: [] } }, MERGE, kubelet)).status, 200)
  })

  it("refuses to delete, evict or update the status of another node's pod, and allows its own", async () => {
    const api = await cluster()
    assertForbidden(await api.delete(`${PODS}/on-n2`, kubelet), 'pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself')
    const evict = await api.post(`${PODS}/on-n2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'on-n2' } }, kubelet)
    assertForbidden(evict, 'pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself')
    const status = await api.patch(`${PODS}/on-n2/status`, { status: { phase: 'Failed' } }, MERGE, kubelet)
    assertForbidden(status, 'pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself')
    const other = await api.get(`${PODS}/on-n2`)
    assert.equal(other.status, 200)
    assert.equal(other.body.metadata.deletionTimestamp, undefined)
    assert.notEqual(other.body.status?.phase, 'Failed')
    assert.equal((await api.patch(`${PODS}/on-n1/status`, { status: { phase: 'Running' } }, MERGE, kubelet)).status, 200)
    // Labels do not change through status: this server's status endpoint keeps the stored metadata (the plugin refuses it otherwise).
    await api.patch(`${PODS}/on-n1/status`, { metadata: { labels: { stolen: 'yes' } } }, MERGE, kubelet)
    assert.equal((await api.get(`${PODS}/on-n1`)).body.metadata.labels?.stolen, undefined)
    assert.equal((await api.delete(`${PODS}/on-n1`, kubelet)).status, 200)
  })

  it('creates only mirror pods bound to and owned by itself', async () => {
    const api = await cluster()
    const n1 = (await api.get('/api/v1/nodes/n1')).body
    const mirror = (extra: Record<string, unknown> = {}) => ({
      metadata: {
        name: 'static',
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: n1.metadata.uid, controller: true }],
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], ...extra },
    })
    const plain = await api.post(PODS, { metadata: { name: 'static' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } }, kubelet)
    assertForbidden(plain, 'pods "static" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods')
    const elsewhere = await api.post(PODS, mirror({ nodeName: 'n2' }), kubelet)
    assertForbidden(elsewhere, 'pods "static" is forbidden: node "n1" can only create pods with spec.nodeName set to itself')
    const secret = await api.post(PODS, mirror({ volumes: [{ name: 's', secret: { secretName: 'token' } }] }), kubelet)
    assertForbidden(secret, 'pods "static" is forbidden: node "n1" can not create pods that reference secrets')
    // CVE-2025-4563: a ResourceClaim named by a mirror pod.
    const claim = await api.post(PODS, mirror({ resourceClaims: [{ name: 'rc', resourceClaimName: 'victim' }] }), kubelet)
    assertForbidden(claim, 'pods "static" is forbidden: node "n1" can not create pods that reference resourceclaims')
    assert.equal((await api.get(`${PODS}/static`)).status, 404)
    assert.equal((await api.post(PODS, mirror(), kubelet)).status, 201)
  })

  it('keeps leases to its own name in kube-node-lease', async () => {
    const api = await cluster()
    await api.post('/api/v1/namespaces', { metadata: { name: 'kube-node-lease' } })
    const lease = (ns: string, name: string) => api.post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { metadata: { name } }, kubelet)
    assertForbidden(await lease('default', 'n1'), 'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace')
    assertForbidden(await lease('kube-node-lease', 'n2'), 'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node')
    assert.equal((await lease('kube-node-lease', 'n1')).status, 201)
  })
})
