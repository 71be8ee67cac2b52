/**
 * The admission port of createApiServer: every write verb and subresource
 * passes the embedder's mutating plugins and then its validating ones, with
 * the operation, old object and dry-run upstream's handlers give them; a
 * refusal stores nothing; the in-process controllers' writes are admitted
 * too, as their own users.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { admissionChain } from '../../core/admission/chain.js'
import type { AdmissionAttributes } from '../../core/admission/attributes.js'
import { forbidden } from '../../core/machinery/status-error.js'
import { createApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { eventually, TestClient } from './harness.js'

interface Seen {
  phase: 'mutating' | 'validating'
  operation: string
  resource: string
  subresource?: string
  name: string
  namespace: string
  dryRun: boolean
  hasObject: boolean
  oldObject?: string
  user: string
}

/** A plugin pair that records what it sees; `refuse` picks the requests the validating half refuses. */
function recorder(refuse: (a: AdmissionAttributes) => boolean = () => false) {
  const seen: Seen[] = []
  const note = (phase: Seen['phase'], a: AdmissionAttributes): void => {
    const record: Seen = {
      phase,
      operation: a.operation,
      resource: a.entry.resource,
      name: a.name,
      namespace: a.namespace,
      dryRun: a.dryRun,
      hasObject: a.object !== undefined,
      user: a.user.username,
    }
    if (a.subresource) record.subresource = a.subresource
    if (a.oldObject) record.oldObject = a.oldObject.metadata.resourceVersion ?? ''
    seen.push(record)
  }
  const chain = admissionChain([
    {
      name: 'Recorder',
      handles: () => true,
      admit(a) {
        note('mutating', a)
        if (a.object && a.operation !== 'DELETE' && !a.subresource && a.entry.resource === 'configmaps')
          a.object.metadata.labels = { ...a.object.metadata.labels, mutated: 'yes' }
      },
    },
    {
      name: 'Refuser',
      handles: () => true,
      validate(a) {
        note('validating', a)
        if (refuse(a)) throw forbidden({ group: a.entry.group, resource: a.entry.resource }, a.name, 'refused by a test plugin')
      },
    },
  ])
  return { seen, chain }
}

async function serverWith(admission: ReturnType<typeof recorder>['chain'], options: ApiServerOptions = {}): Promise<TestClient> {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, bookmarkIntervalMs: 50, garbageCollector: false, ...options }, { admission })
  await server.ready
  return new TestClient(server)
}

const CM = '/api/v1/namespaces/default/configmaps'
const of = (seen: Seen[], resource: string) => seen.filter((s) => s.resource === resource)

describe('the admission port', () => {
  it('sees a create in both phases, the mutation stored, validation on the mutated object', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain)
    seen.length = 0
    const res = await api.post(CM, { metadata: { name: 'a' }, data: { k: 'v' } })
    assert.equal(res.status, 201)
    assert.equal(res.body.metadata.labels.mutated, 'yes')
    assert.deepEqual(
      of(seen, 'configmaps').map((s) => [s.phase, s.operation, s.name, s.namespace, s.dryRun, s.hasObject]),
      [
        ['mutating', 'CREATE', 'a', 'default', false, true],
        ['validating', 'CREATE', 'a', 'default', false, true],
      ],
    )
  })

  it('gives update, patch and apply the stored object as the old one, and passes dryRun', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain)
    const created = await api.post(CM, { metadata: { name: 'a' }, data: { k: 'v' } })
    const rv = created.body.metadata.resourceVersion as string
    seen.length = 0
    const put = await api.put(`${CM}/a?dryRun=All`, { ...created.body, data: { k: 'w' } })
    assert.equal(put.status, 200)
    const patched = await api.patch(`${CM}/a`, { data: { k: 'x' } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200)
    const applied = await api.patch(
      `${CM}/a?fieldManager=test`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { other: 'y' } },
      'application/apply-patch+yaml',
    )
    assert.equal(applied.status, 200)
    assert.deepEqual(
      of(seen, 'configmaps').map((s) => [s.phase, s.operation, s.dryRun, s.oldObject]),
      [
        ['mutating', 'UPDATE', true, rv],
        ['validating', 'UPDATE', true, rv],
        ['mutating', 'UPDATE', false, rv],
        ['validating', 'UPDATE', false, rv],
        ['mutating', 'UPDATE', false, patched.body.metadata.resourceVersion],
        ['validating', 'UPDATE', false, patched.body.metadata.resourceVersion],
      ],
    )
  })

  it('gives DELETE no object in the mutating phase and the stored one in the validating phase, per item for a collection', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain)
    const a = await api.post(CM, { metadata: { name: 'a' } })
    const b = await api.post(CM, { metadata: { name: 'b' } })
    const c = await api.post(CM, { metadata: { name: 'c' } })
    seen.length = 0
    assert.equal((await api.delete(`${CM}/a`)).status, 200)
    assert.equal((await api.delete(`${CM}?labelSelector=!x`)).status, 200)
    assert.deepEqual(
      of(seen, 'configmaps').map((s) => [s.phase, s.operation, s.name, s.hasObject, s.oldObject]),
      [
        ['mutating', 'DELETE', 'a', false, undefined],
        ['validating', 'DELETE', 'a', false, a.body.metadata.resourceVersion],
        ['mutating', 'DELETE', '', false, undefined],
        ['validating', 'DELETE', 'b', false, b.body.metadata.resourceVersion],
        ['validating', 'DELETE', 'c', false, c.body.metadata.resourceVersion],
      ],
    )
  })

  it('admits the status and scale subresources as updates of them', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain)
    const deployment = {
      metadata: { name: 'd' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    }
    const created = await api.post('/apis/apps/v1/namespaces/default/deployments', deployment)
    assert.equal(created.status, 201)
    seen.length = 0
    const scaled = await api.patch('/apis/apps/v1/namespaces/default/deployments/d/scale', { spec: { replicas: 3 } }, 'application/merge-patch+json')
    assert.equal(scaled.status, 200)
    const status = await api.patch('/apis/apps/v1/namespaces/default/deployments/d/status', { status: { observedGeneration: 1 } }, 'application/merge-patch+json')
    assert.equal(status.status, 200)
    assert.deepEqual(
      of(seen, 'deployments').map((s) => [s.phase, s.operation, s.subresource]),
      [
        ['mutating', 'UPDATE', 'scale'],
        ['validating', 'UPDATE', 'scale'],
        ['mutating', 'UPDATE', 'status'],
        ['validating', 'UPDATE', 'status'],
      ],
    )
  })

  it('admits an eviction as a CREATE of pods/eviction, and a review as a CREATE of the review', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain)
    const pod = await api.post('/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })
    assert.equal(pod.status, 201)
    seen.length = 0
    const evicted = await api.post('/api/v1/namespaces/default/pods/p/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } })
    assert.equal(evicted.status, 201)
    const review = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    })
    assert.equal(review.status, 201)
    // The eviction's own update and delete of the pod are not admitted again.
    assert.deepEqual(
      seen.map((s) => [s.phase, s.operation, s.resource, s.subresource ?? '', s.name, s.hasObject]),
      [
        ['mutating', 'CREATE', 'pods', 'eviction', 'p', true],
        ['validating', 'CREATE', 'pods', 'eviction', 'p', true],
        ['mutating', 'CREATE', 'selfsubjectaccessreviews', '', '', true],
        ['validating', 'CREATE', 'selfsubjectaccessreviews', '', '', true],
      ],
    )
  })

  it('refuses with the plugin Status and stores nothing, on create, update and delete', async () => {
    const { chain } = recorder((a) => a.entry.resource === 'configmaps' && a.name === 'kept')
    const api = await serverWith(chain)
    const refused = await api.post(CM, { metadata: { name: 'kept' }, data: { k: 'v' } })
    assert.equal(refused.status, 403)
    assert.equal(refused.body.message, 'configmaps "kept" is forbidden: refused by a test plugin')
    assert.equal((await api.get(`${CM}/kept`)).status, 404)
    const { chain: second } = recorder((a) => a.entry.resource === 'configmaps' && a.operation !== 'CREATE')
    const api2 = await serverWith(second)
    const created = await api2.post(CM, { metadata: { name: 'x' }, data: { k: 'v' } })
    assert.equal((await api2.put(`${CM}/x`, { ...created.body, data: { k: 'changed' } })).status, 403)
    assert.equal((await api2.delete(`${CM}/x`)).status, 403)
    const stored = await api2.get(`${CM}/x`)
    assert.deepEqual(stored.body, created.body)
  })

  it('refuses an eviction and leaves the pod', async () => {
    const { chain } = recorder((a) => a.subresource === 'eviction')
    const api = await serverWith(chain)
    const pod = await api.post('/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })
    const res = await api.post('/api/v1/namespaces/default/pods/p/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } })
    assert.equal(res.status, 403)
    assert.deepEqual((await api.get('/api/v1/namespaces/default/pods/p')).body, pod.body)
  })

  it('admits the controllers writes as their own users', async () => {
    const { seen, chain } = recorder()
    const api = await serverWith(chain, { garbageCollector: true })
    // At start: the system namespaces as the API server itself.
    assert.ok(seen.some((s) => s.resource === 'namespaces' && s.operation === 'CREATE' && s.name === 'kube-system' && s.user === 'system:apiserver'))
    await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    await eventually('the default service account is admitted', async () =>
      seen.some((s) => s.phase === 'validating' && s.resource === 'serviceaccounts' && s.namespace === 'team' && s.user === 'system:serviceaccount:kube-system:service-account-controller'),
    )
    await api.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'inside' } })
    await api.delete('/api/v1/namespaces/team')
    await eventually('the namespace controller deletes the content, admitted', async () =>
      seen.some((s) => s.phase === 'validating' && s.operation === 'DELETE' && s.resource === 'configmaps' && s.name === 'inside' && s.user === 'system:serviceaccount:kube-system:namespace-controller'),
    )
    const owner = await api.post(CM, { metadata: { name: 'owner' } })
    await api.post(CM, { metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.body.metadata.uid }] } })
    await api.delete(`${CM}/owner`)
    await eventually('the garbage collector deletes the dependent, admitted', async () =>
      seen.some((s) => s.phase === 'validating' && s.operation === 'DELETE' && s.name === 'dependent' && s.user === 'system:serviceaccount:kube-system:generic-garbage-collector'),
    )
  })
})
