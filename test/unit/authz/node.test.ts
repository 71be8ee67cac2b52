import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Attributes } from '../../../core/authz/authorizer.js'
import { NodeGraph } from '../../../core/authz/node-graph.js'
import { persistentVolumeEdges, podEdges, volumeAttachmentEdges } from '../../../core/authz/node-references.js'
import { nodeAuthorizer, nodeIdentity } from '../../../core/authz/node.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const pod = (name: string, nodeName: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'apps' },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
})

const webPod = pod('web', 'node-a', {
  serviceAccountName: 'web-sa',
  imagePullSecrets: [{ name: 'pull' }],
  containers: [
    {
      name: 'c',
      image: 'i',
      env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }, { name: 'C', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } }],
      envFrom: [{ configMapRef: { name: 'from-cm' } }, { secretRef: { name: 'from-secret' } }],
    },
  ],
  initContainers: [{ name: 'init', image: 'i', envFrom: [{ secretRef: { name: 'init-secret' } }] }],
  volumes: [
    { name: 'v1', secret: { secretName: 'vol-secret' } },
    { name: 'v2', configMap: { name: 'vol-cm' } },
    { name: 'v3', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
    { name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } },
    { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
  ],
})

function graph(): NodeGraph {
  const g = new NodeGraph()
  const add = (type: 'pod' | 'pv' | 'volumeattachment', o: KubeObject, edges: typeof podEdges) =>
    g.setEdges({ type, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' }, edges(o))
  add('pod', webPod, podEdges)
  add('pod', pod('other', 'node-b', { volumes: [{ name: 's', secret: { secretName: 'b-secret' } }] }), podEdges)
  add('pod', pod('pending', '', { volumes: [{ name: 's', secret: { secretName: 'pending-secret' } }] }), podEdges)
  const pv: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-data' },
    spec: {
      claimRef: { namespace: 'apps', name: 'data-claim' },
      csi: { driver: 'd', volumeHandle: 'h', nodePublishSecretRef: { name: 'csi-secret', namespace: 'storage' }, controllerPublishSecretRef: { name: 'ctl-secret', namespace: 'storage' } },
    },
  }
  add('pv', pv, persistentVolumeEdges)
  add('volumeattachment', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va-1' }, spec: { nodeName: 'node-a' } }, volumeAttachmentEdges)
  return g
}

const kubelet = (node: string) => ({ username: `system:node:${node}`, groups: ['system:nodes', 'system:authenticated'] })

function req(verb: string, apiGroup: string, resource: string, namespace: string, name: string, extra: Partial<Attributes> = {}): Attributes {
  return { user: kubelet('node-a'), verb, isResourceRequest: true, path: '', namespace, apiGroup, apiVersion: 'v1', resource, subresource: '', name, ...extra }
}

describe('node identity', () => {
  it('needs both the system:node: name and the system:nodes group', () => {
    assert.deepEqual(nodeIdentity(kubelet('n1')), { nodeName: 'n1' })
    assert.equal(nodeIdentity({ username: 'system:node:n1', groups: ['system:authenticated'] }), undefined)
    assert.equal(nodeIdentity({ username: 'n1', groups: ['system:nodes'] }), undefined)
    assert.deepEqual(nodeIdentity({ username: 'system:node:', groups: ['system:nodes'] }), { nodeName: '' })
  })
})

describe('Node authorizer', () => {
  const authorizer = nodeAuthorizer(graph())
  const allowed: [string, Attributes][] = [
    ['its pod', req('get', '', 'pods', 'apps', 'web')],
    ['a secret from a volume', req('get', '', 'secrets', 'apps', 'vol-secret')],
    ['a pull secret', req('get', '', 'secrets', 'apps', 'pull')],
    ['a secret from env', req('get', '', 'secrets', 'apps', 'env-secret')],
    ['a secret from envFrom', req('watch', '', 'secrets', 'apps', 'from-secret')],
    ['an init container secret', req('list', '', 'secrets', 'apps', 'init-secret')],
    ['a projected secret', req('get', '', 'secrets', 'apps', 'proj-secret')],
    ['a config map from env', req('get', '', 'configmaps', 'apps', 'env-cm')],
    ['a config map from envFrom', req('get', '', 'configmaps', 'apps', 'from-cm')],
    ['a config map volume', req('get', '', 'configmaps', 'apps', 'vol-cm')],
    ['a projected config map', req('get', '', 'configmaps', 'apps', 'proj-cm')],
    ['its claim', req('get', '', 'persistentvolumeclaims', 'apps', 'data-claim')],
    ['an ephemeral volume claim', req('get', '', 'persistentvolumeclaims', 'apps', 'web-scratch')],
    ['its claim status', req('patch', '', 'persistentvolumeclaims', 'apps', 'data-claim', { subresource: 'status' })],
    ['the volume of its claim', req('get', '', 'persistentvolumes', '', 'pv-data')],
    ['the mount secret of that volume', req('get', '', 'secrets', 'storage', 'csi-secret')],
    ['its volume attachment', req('get', 'storage.k8s.io', 'volumeattachments', '', 'va-1')],
    ['a token of its pods\' service account', req('create', '', 'serviceaccounts', 'apps', 'web-sa', { subresource: 'token' })],
    ['its own Node', req('get', '', 'nodes', '', 'node-a')],
    ['its Node status', req('patch', '', 'nodes', '', 'node-a', { subresource: 'status' })],
    ['registering a Node', req('create', '', 'nodes', '', '')],
    ['its Lease', req('update', 'coordination.k8s.io', 'leases', 'kube-node-lease', 'node-a')],
    ['creating its Lease', req('create', 'coordination.k8s.io', 'leases', 'kube-node-lease', '')],
    ['listing its pods by spec.nodeName', req('list', '', 'pods', '', '', { fieldSelector: 'spec.nodeName=node-a' })],
    ['pod status', req('update', '', 'pods', 'apps', 'web', { subresource: 'status' })],
    ['mirror pods', req('create', '', 'pods', 'apps', '')],
    ['events', req('create', '', 'events', 'apps', '')],
    ['services', req('list', '', 'services', '', '')],
    ['token reviews', req('create', 'authentication.k8s.io', 'tokenreviews', '', '')],
    ['its CSINode', req('update', 'storage.k8s.io', 'csinodes', '', 'node-a')],
  ]
  for (const [what, attrs] of allowed) {
    it(`allows ${what}`, async () => assert.deepEqual(await authorizer.authorize(attrs), { decision: 'allow', reason: '' }))
  }

  const refused: [string, Attributes, string][] = [
    ['another node\'s pod', req('get', '', 'pods', 'apps', 'other'), "no relationship found between node 'node-a' and this object"],
    ['another node\'s secret', req('get', '', 'secrets', 'apps', 'b-secret'), "no relationship found between node 'node-a' and this object"],
    ['a secret of a pod bound to no node', req('get', '', 'secrets', 'apps', 'pending-secret'), "no relationship found between node 'node-a' and this object"],
    ['a secret only the CSI controller uses', req('get', '', 'secrets', 'storage', 'ctl-secret'), "no relationship found between node 'node-a' and this object"],
    ['a secret of its pod in another namespace', req('get', '', 'secrets', 'default', 'vol-secret'), "no relationship found between node 'node-a' and this object"],
    ['listing all secrets', req('list', '', 'secrets', 'apps', ''), 'No Object name found'],
    ['writing a secret it may read', req('update', '', 'secrets', 'apps', 'vol-secret'), 'can only read resources of this type'],
    ['reading secrets across namespaces', req('get', '', 'secrets', '', 'vol-secret'), 'can only read namespaced object of this type'],
    ['listing every pod', req('list', '', 'pods', '', ''), 'can only list/watch pods with spec.nodeName field selector'],
    ['listing another node\'s pods', req('list', '', 'pods', '', '', { fieldSelector: 'spec.nodeName=node-b' }), 'can only list/watch pods with spec.nodeName field selector'],
    ['another Node', req('get', '', 'nodes', '', 'node-b'), "node 'node-a' cannot read 'node-b', only its own Node object"],
    ['every Node', req('list', '', 'nodes', '', ''), "node 'node-a' cannot read all nodes, only its own Node object"],
    ['another node\'s Lease', req('update', 'coordination.k8s.io', 'leases', 'kube-node-lease', 'node-b'), 'can only access node lease with the same name as the requesting node'],
    ['a Lease elsewhere', req('get', 'coordination.k8s.io', 'leases', 'default', 'node-a'), 'can only access leases in the "kube-node-lease" system namespace'],
    ['a token of another service account', req('create', '', 'serviceaccounts', 'apps', 'default', { subresource: 'token' }), "no relationship found between node 'node-a' and this object"],
    ['listing volumes', req('list', '', 'persistentvolumes', '', ''), 'can only get individual resources of this type'],
    ['deployments', req('get', 'apps', 'deployments', 'apps', 'web'), ''],
    ['deleting a namespace', req('delete', '', 'namespaces', '', 'apps'), ''],
  ]
  for (const [what, attrs, reason] of refused) {
    it(`has no opinion on ${what}`, async () => assert.deepEqual(await authorizer.authorize(attrs), { decision: 'no-opinion', reason }))
  }

  it('has no opinion on a forged system:node: name without the system:nodes group', async () => {
    const forged = req('get', '', 'secrets', 'apps', 'vol-secret', { user: { username: 'system:node:node-a', groups: ['system:authenticated'] } })
    assert.deepEqual(await authorizer.authorize(forged), { decision: 'no-opinion', reason: '' })
  })

  it('forgets what a pod used once the pod is gone or moved', async () => {
    const g = graph()
    const a = nodeAuthorizer(g)
    g.setEdges({ type: 'pod', namespace: 'apps', name: 'web' }, podEdges(pod('web', 'node-b')))
    assert.equal((await a.authorize(req('get', '', 'secrets', 'apps', 'vol-secret'))).decision, 'no-opinion')
    assert.equal((await a.authorize(req('get', '', 'pods', 'apps', 'web'))).decision, 'no-opinion')
    g.setEdges({ type: 'pod', namespace: 'apps', name: 'web' }, [])
    assert.equal((await a.authorize({ ...req('get', '', 'pods', 'apps', 'web'), user: kubelet('node-b') })).decision, 'no-opinion')
  })
})
