/**
 * A write through `<resource>/status` keeps what the resource's upstream
 * status strategy keeps (its PrepareForUpdate): the stored spec always,
 * the request's status, and the request's metadata but for the fields that
 * strategy resets (a Deployment's labels, a Pod's owner references, the
 * whole metadata of a FlowSchema, ...). Each built-in resource with a
 * status subresource gets one merge patch that changes a label, an
 * annotation, the spec and the status; CertificateSigningRequests'
 * `approval` and custom resources' status follow their own strategies.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import type { ResourceEntry } from '../../core/resources/catalogue.js'
import { apiVersionOf, collectionPath, SAMPLES } from './catalogue-samples.js'
import { createTestServer, TestClient } from './harness.js'

type Kept = readonly string[] | 'all'

const RESET_FOR_STATUS = ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences']
const when = '2024-01-01T00:00:00Z'
const ready = { type: 'Ready', status: 'True', reason: 'Checked', message: 'checked', lastTransitionTime: when }

/** Per resource: a spec change, a status change it accepts, and the metadata upstream's status strategy keeps as stored. */
const CASES: { gvr: string; spec: Record<string, unknown>; status?: Record<string, unknown>; kept: Kept; sampleName?: true }[] = [
  { gvr: '/v1/namespaces', spec: { finalizers: ['kubernetes', 'example.com/more'] }, status: { conditions: [{ type: 'NamespaceContentRemaining', status: 'False', reason: 'Checked', message: 'none' }] }, kept: [] },
  { gvr: '/v1/nodes', spec: { unschedulable: true }, status: { capacity: { pods: '110' } }, kept: [] },
  { gvr: '/v1/persistentvolumeclaims', spec: { volumeName: 'other-volume' }, status: { phase: 'Bound' }, kept: [] },
  { gvr: '/v1/persistentvolumes', spec: { storageClassName: 'other-class' }, status: { phase: 'Available', message: 'ready' }, kept: [] },
  { gvr: '/v1/pods', spec: { activeDeadlineSeconds: 30 }, status: { phase: 'Running' }, kept: ['deletionTimestamp', 'ownerReferences'] },
  { gvr: '/v1/replicationcontrollers', spec: { minReadySeconds: 5 }, status: { replicas: 1 }, kept: [] },
  { gvr: '/v1/resourcequotas', spec: { hard: { pods: '7' } }, status: { hard: { pods: '5' }, used: { pods: '1' } }, kept: [] },
  { gvr: '/v1/services', spec: { sessionAffinity: 'ClientIP' }, status: { conditions: [ready] }, kept: [] },
  // An APIService's name is its version and group: its sample's own.
  { gvr: 'apiregistration.k8s.io/v1/apiservices', spec: { groupPriorityMinimum: 999 }, status: { conditions: [{ type: 'Available', status: 'True', reason: 'Checked', message: 'ok' }] }, kept: ['labels', 'annotations', 'finalizers', 'ownerReferences'], sampleName: true },
  { gvr: 'apps/v1/daemonsets', spec: { minReadySeconds: 5 }, status: { observedGeneration: 1 }, kept: [] },
  { gvr: 'apps/v1/deployments', spec: { minReadySeconds: 5 }, status: { observedGeneration: 1 }, kept: ['labels'] },
  { gvr: 'apps/v1/replicasets', spec: { minReadySeconds: 5 }, status: { observedGeneration: 1 }, kept: [] },
  { gvr: 'apps/v1/statefulsets', spec: { minReadySeconds: 5 }, status: { observedGeneration: 1 }, kept: [] },
  { gvr: 'autoscaling/v1/horizontalpodautoscalers', spec: { maxReplicas: 7 }, status: { currentReplicas: 1, desiredReplicas: 2 }, kept: [] },
  { gvr: 'autoscaling/v2/horizontalpodautoscalers', spec: { maxReplicas: 7 }, status: { currentReplicas: 1, desiredReplicas: 2 }, kept: [] },
  { gvr: 'batch/v1/cronjobs', spec: { suspend: true }, status: { lastScheduleTime: when }, kept: [] },
  { gvr: 'batch/v1/jobs', spec: { activeDeadlineSeconds: 30 }, status: { startTime: when }, kept: [] },
  { gvr: 'certificates.k8s.io/v1/certificatesigningrequests', spec: { expirationSeconds: 3600 }, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'Checked', message: 'failed' }] }, kept: [] },
  { gvr: 'networking.k8s.io/v1/ingresses', spec: { ingressClassName: 'other-class' }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } }, kept: [] },
  { gvr: 'networking.k8s.io/v1/servicecidrs', spec: { cidrs: ['10.200.0.0/24'] }, status: { conditions: [ready] }, kept: RESET_FOR_STATUS },
  { gvr: 'policy/v1/poddisruptionbudgets', spec: { minAvailable: 2 }, status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }, kept: [] },
  { gvr: 'storage.k8s.io/v1/volumeattachments', spec: { nodeName: 'other-node' }, status: { attached: true }, kept: RESET_FOR_STATUS },
  { gvr: 'admissionregistration.k8s.io/v1/validatingadmissionpolicies', spec: { failurePolicy: 'Ignore' }, status: { observedGeneration: 1 }, kept: RESET_FOR_STATUS },
  // Upstream's CRD status strategy resets the new object's metadata to itself: the request's labels and annotations stay.
  { gvr: 'apiextensions.k8s.io/v1/customresourcedefinitions', spec: { scope: 'Cluster' }, status: { conditions: [{ type: 'NonStructuralSchema', status: 'False', reason: 'Checked', message: 'structural' }] }, kept: [], sampleName: true },
  { gvr: 'flowcontrol.apiserver.k8s.io/v1/flowschemas', spec: { matchingPrecedence: 999 }, status: { conditions: [{ type: 'Dangling', status: 'False', reason: 'Found', message: 'found' }] }, kept: 'all' },
  { gvr: 'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', spec: { limited: { nominalConcurrencyShares: 7 } }, status: { conditions: [{ type: 'ConcurrencyShared', status: 'True', reason: 'Checked', message: 'shared' }] }, kept: 'all' },
  // A claim takes no status of note before it is allocated: its metadata and spec are what this row checks.
  { gvr: 'resource.k8s.io/v1/resourceclaims', spec: { devices: { requests: [{ name: 'other', exactly: { deviceClassName: 'other' } }] } }, kept: RESET_FOR_STATUS },
]

let api: TestClient

before(async () => {
  const server = createTestServer({ watchCache: false })
  await server.ready
  api = new TestClient(server)
})

function entryOf(gvr: string): ResourceEntry {
  const [group, version, resource] = gvr.split('/')
  const entry = api.server.catalogue.lookup(group ?? '', version ?? '', resource ?? '')
  assert.ok(entry, `no catalogue entry for ${gvr}`)
  return entry
}

/** `actual` holds everything `expected` does (the server may add defaults). */
function assertIncludes(actual: unknown, expected: unknown, message: string): void {
  if (expected && typeof expected === 'object' && !Array.isArray(expected) && actual && typeof actual === 'object') {
    for (const [key, value] of Object.entries(expected)) assertIncludes((actual as Record<string, unknown>)[key], value, `${message}.${key}`)
  } else if (Array.isArray(expected) && Array.isArray(actual) && actual.length === expected.length) {
    expected.forEach((item, i) => assertIncludes(actual[i], item, `${message}[${i}]`))
  } else {
    assert.deepEqual(actual, expected, message)
  }
}

const keeps = (kept: Kept, field: string): boolean => kept === 'all' || kept.includes(field)

describe('status writes of every built-in resource with a status subresource', () => {
  it('leaves no such resource out of the table', () => {
    const withStatus = api.server.catalogue.entries
      .filter((e) => !e.schema && e.subresources?.some((s) => s.name === 'status'))
      .map((e) => `${e.group}/${e.version}/${e.resource}`)
    assert.deepEqual([...new Set(withStatus)].sort(), CASES.map((c) => c.gvr).sort())
  })

  for (const c of CASES) {
    const what = c.kept === 'all' ? 'the stored metadata' : c.kept.length ? `the stored ${c.kept.filter((f) => f === 'labels' || f === 'annotations' || f === 'ownerReferences').join(', ')}` : "the request's labels and annotations"
    it(`${c.gvr}: a merge patch to status stores its status with ${what} and the stored spec`, async () => {
      const sample = SAMPLES.find((s) => s.gvr === c.gvr)
      assert.ok(sample, `no sample for ${c.gvr}`)
      const entry = entryOf(c.gvr)
      // A CRD's name is its plural and group, an APIService's its version and group: their samples' own.
      const name = `${(sample.body['metadata'] as { name: string }).name}${c.sampleName ? '' : '-st'}`
      const base = collectionPath(c.gvr, entry.namespaced)
      const created = await api.post(base, {
        apiVersion: apiVersionOf(c.gvr),
        kind: entry.kind,
        ...sample.body,
        metadata: { name, labels: { tier: 'stored' }, annotations: { note: 'stored' } },
      })
      assert.equal(created.status, 201, created.text)
      const patch: Record<string, unknown> = {
        metadata: { labels: { tier: 'sent' }, annotations: { note: 'sent' } },
        spec: c.spec,
        ...(c.status ? { status: c.status } : {}),
      }
      const patched = await api.patch(`${base}/${name}/status`, patch, 'application/merge-patch+json')
      assert.equal(patched.status, 200, patched.text)
      const written = patched.body
      // The server's own labels and annotations (a namespace's name label, a DaemonSet's template generation) may come on top.
      assert.equal(written.metadata.labels?.tier, keeps(c.kept, 'labels') ? 'stored' : 'sent')
      assert.equal(written.metadata.annotations?.note, keeps(c.kept, 'annotations') ? 'stored' : 'sent')
      assert.deepEqual(written.spec, created.body.spec, 'the spec stays as stored')
      if (c.status) assertIncludes(written.status, c.status, 'status')
      const stored = (await api.get(`${base}/${name}`)).body
      assert.deepEqual([stored.metadata.labels, stored.metadata.annotations], [written.metadata.labels, written.metadata.annotations])
      assert.deepEqual(stored.spec, created.body.spec)
    })
  }

  it("a Pod's status write keeps its stored owner references and drops the ones it sends", async () => {
    const sample = SAMPLES.find((s) => s.gvr === '/v1/pods')!
    // A real owner, so that the garbage collector leaves the Pod be.
    const ownerMap = await api.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } })
    assert.equal(ownerMap.status, 201, ownerMap.text)
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerMap.body.metadata.uid }
    const created = await api.post('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', ...sample.body, metadata: { name: 'owned', ownerReferences: [owner] } })
    assert.equal(created.status, 201, created.text)
    const sent = { ...owner, name: 'other', uid: '22222222-2222-2222-2222-222222222222' }
    const patched = await api.patch('/api/v1/namespaces/default/pods/owned/status', { metadata: { ownerReferences: [sent], labels: { a: 'b' } } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.body.metadata.ownerReferences, [owner])
    assert.deepEqual(patched.body.metadata.labels, { a: 'b' })
  })
})

describe("a CertificateSigningRequest's approval", () => {
  it('stores the conditions and the annotation it sends, and keeps the stored spec', async () => {
    const sample = SAMPLES.find((s) => s.gvr === 'certificates.k8s.io/v1/certificatesigningrequests')!
    const base = '/apis/certificates.k8s.io/v1/certificatesigningrequests'
    const created = await api.post(base, { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', ...sample.body, metadata: { name: 'approved' } })
    assert.equal(created.status, 201, created.text)
    const approval = { type: 'Approved', status: 'True', reason: 'E2E', message: 'approved by the test' }
    const patch = { metadata: { annotations: { patchedapproval: 'true' } }, spec: { expirationSeconds: 3600 }, status: { conditions: [approval] } }
    const patched = await api.patch(`${base}/approved/approval`, patch, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.body.metadata.annotations, { patchedapproval: 'true' })
    assert.deepEqual(patched.body.spec, created.body.spec)
    assert.equal(patched.body.status.conditions.length, 1)
    assertIncludes(patched.body.status.conditions[0], approval, 'condition')
    assert.deepEqual((await api.get(`${base}/approved`)).body.metadata.annotations, { patchedapproval: 'true' })
  })
})

describe("a namespace's finalize", () => {
  const NS = '/api/v1/namespaces'

  it('stores the finalizers and metadata a PUT sends, and keeps the stored status', async () => {
    assert.equal((await api.post(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' } })).status, 201)
    const current = (await api.get(`${NS}/fin`)).body
    const body = {
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata.labels, finalized: 'yes' } },
      spec: { finalizers: ['kubernetes', 'e2e.example.com/fakeFinalizer'] },
      status: { phase: 'Terminating' },
    }
    const put = await api.put(`${NS}/fin/finalize`, body)
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.body.spec.finalizers, ['kubernetes', 'e2e.example.com/fakeFinalizer'])
    assert.equal(put.body.metadata.labels.finalized, 'yes')
    assert.deepEqual(put.body.status, { phase: 'Active' })
    const removed = await api.put(`${NS}/fin/finalize`, { ...put.body, spec: { finalizers: ['kubernetes'] } })
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual((await api.get(`${NS}/fin`)).body.spec.finalizers, ['kubernetes'])
  })

  it('refuses a finalizer that is not a qualified name with 422 and keeps the stored ones', async () => {
    assert.equal((await api.post(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin-bad' } })).status, 201)
    const current = (await api.get(`${NS}/fin-bad`)).body
    const put = await api.put(`${NS}/fin-bad/finalize`, { ...current, spec: { finalizers: ['kubernetes', 'not a name'] } })
    assert.equal(put.status, 422, put.text)
    assert.equal(put.body.details.causes[0].field, 'spec.finalizers[1]')
    assert.deepEqual((await api.get(`${NS}/fin-bad`)).body.spec.finalizers, ['kubernetes'])
  })

  it('refuses a PATCH of finalize with 405, as upstream serves only PUT there', async () => {
    assert.equal((await api.post(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin-patch' } })).status, 201)
    const patched = await api.patch(`${NS}/fin-patch/finalize`, { spec: { finalizers: [] } }, 'application/merge-patch+json')
    assert.equal(patched.status, 405, patched.text)
    assert.deepEqual((await api.get(`${NS}/fin-patch`)).body.spec.finalizers, ['kubernetes'])
  })
})
