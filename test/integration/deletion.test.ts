/** What a DELETE does: graceful deletion of pods, propagation policies' finalizers, preconditions. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { podGracePeriod } from '../../core/resources/core/pod-deletion.js'
import { startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const CMS = '/api/v1/namespaces/default/configmaps'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'

async function server(): Promise<TestClient> {
  // What a DELETE itself stores: no garbage collector acting on the finalizers meanwhile.
  const api = await startServer({ garbageCollector: false })
  // The pods entry names its graceful deletion hook; the fallback keeps these tests meaningful either way.
  const pods = api.server.catalogue.lookup('', 'v1', 'pods')!
  pods.strategy.checkGracefulDelete ??= podGracePeriod
  return api
}

async function createPod(api: TestClient, name: string, spec: Record<string, unknown> = {}) {
  const res = await api.post(PODS, { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

describe('graceful deletion of pods', () => {
  it('deletes a pod never scheduled at once', async () => {
    const api = await server()
    await createPod(api, 'p')
    const res = await api.delete(`${PODS}/p`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'Status')
    assert.equal(res.body.status, 'Success')
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('keeps a scheduled pod with a deletionTimestamp until it is deleted with grace period 0', async () => {
    const api = await server()
    await createPod(api, 'p', { nodeName: 'node-1', terminationGracePeriodSeconds: 45 })
    const res = await api.delete(`${PODS}/p`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'Pod')
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 45)
    const at = Date.parse(res.body.metadata.deletionTimestamp)
    // The grace period counts from the request, which came after the creation.
    assert.ok(at - Date.parse(res.body.metadata.creationTimestamp) >= 45_000, res.body.metadata.deletionTimestamp)
    const still = await api.get(`${PODS}/p`)
    assert.equal(still.status, 200)
    assert.equal(still.body.metadata.deletionTimestamp, res.body.metadata.deletionTimestamp)

    // A second delete without a shorter period changes nothing.
    const again = await api.delete(`${PODS}/p`)
    assert.equal(again.status, 200)
    assert.equal(again.body.metadata.resourceVersion, still.body.metadata.resourceVersion)

    const shorter = await api.delete(`${PODS}/p`, { body: { gracePeriodSeconds: 10 } })
    assert.equal(shorter.body.metadata.deletionGracePeriodSeconds, 10)
    assert.equal(Date.parse(shorter.body.metadata.deletionTimestamp), at - 35_000)

    const now = await api.delete(`${PODS}/p?gracePeriodSeconds=0`)
    assert.equal(now.status, 200, now.text)
    assert.equal(now.body.kind, 'Status')
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('deletes a scheduled pod at once with grace period 0', async () => {
    const api = await server()
    await createPod(api, 'p', { nodeName: 'node-1' })
    const res = await api.delete(`${PODS}/p`, { body: { gracePeriodSeconds: 0 } })
    assert.equal(res.body.kind, 'Status')
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('deletes a finished pod at once', async () => {
    const api = await server()
    await createPod(api, 'p', { nodeName: 'node-1' })
    await api.patch(`${PODS}/p/status`, { status: { phase: 'Succeeded' } }, 'application/merge-patch+json')
    const res = await api.delete(`${PODS}/p`)
    assert.equal(res.body.kind, 'Status')
  })
})

describe('propagation policies', () => {
  it('adds the orphan finalizer for Orphan and keeps the object marked for deletion', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'c' } })
    const res = await api.delete(`${CMS}/c`, { body: { propagationPolicy: 'Orphan' } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.metadata.finalizers, ['orphan'])
    assert.ok(res.body.metadata.deletionTimestamp)
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 0)
    assert.equal((await api.get(`${CMS}/c`)).status, 200)
  })

  // Upstream's DefaultGarbageCollectionPolicy of the two: pods of a v1 ReplicationController or a batch/v1 Job outlive
  // it unless the delete names a policy; a Job's delete says so in a warning.
  it('orphans by default for ReplicationControllers and Jobs, and warns of it for Jobs', async () => {
    const api = await server()
    const template = { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }
    const RCS = '/api/v1/namespaces/default/replicationcontrollers'
    const JOBS = '/apis/batch/v1/namespaces/default/jobs'
    for (const name of ['rc', 'kept', 'gone']) assert.equal((await api.post(RCS, { metadata: { name }, spec: { replicas: 0, selector: { a: 'b' }, template } })).status, 201)
    const jobTemplate = { spec: { ...template.spec, restartPolicy: 'Never' } }
    for (const name of ['job', 'gone']) assert.equal((await api.post(JOBS, { metadata: { name }, spec: { template: jobTemplate } })).status, 201)

    const rc = await api.delete(`${RCS}/rc`)
    assert.equal(rc.status, 200, rc.text)
    assert.deepEqual(rc.body.metadata.finalizers, ['orphan'])
    assert.equal(rc.headers.get('warning'), null)
    const job = await api.delete(`${JOBS}/job`)
    assert.deepEqual(job.body.metadata.finalizers, ['orphan'])
    assert.equal(
      job.headers.get('warning'),
      '299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"',
    )
    // A policy named, or a finalizer of the collector's already there, decides instead.
    assert.equal((await api.delete(`${RCS}/gone?propagationPolicy=Background`)).body.kind, 'Status')
    const background = await api.delete(`${JOBS}/gone`, { body: { propagationPolicy: 'Background' } })
    assert.equal(background.body.kind, 'Status')
    assert.equal(background.headers.get('warning'), null)
    await api.patch(`${RCS}/kept`, { metadata: { finalizers: ['foregroundDeletion'] } }, 'application/merge-patch+json')
    assert.deepEqual((await api.delete(`${RCS}/kept`)).body.metadata.finalizers, ['foregroundDeletion'])
  })

  it('keeps an object held by finalizers when it is deleted again', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'c', finalizers: ['example.com/keep'] } })
    const first = await api.delete(`${CMS}/c`)
    assert.ok(first.body.metadata.deletionTimestamp)
    const second = await api.delete(`${CMS}/c`)
    assert.equal(second.status, 200, second.text)
    assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion)
    assert.deepEqual((await api.get(`${CMS}/c`)).body.metadata.finalizers, ['example.com/keep'])
  })

  it('adds the foregroundDeletion finalizer for Foreground, from the query too', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'c', finalizers: ['example.com/keep'] } })
    const res = await api.delete(`${CMS}/c?propagationPolicy=Foreground`)
    assert.deepEqual(res.body.metadata.finalizers, ['example.com/keep', 'foregroundDeletion'])
  })

  it('bumps the generation of a tracked resource when it is marked', async () => {
    const api = await server()
    const created = await api.post(DEPLOYS, {
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    })
    assert.equal(created.status, 201, created.text)
    const res = await api.delete(`${DEPLOYS}/d`, { body: { propagationPolicy: 'Foreground' } })
    assert.deepEqual(res.body.metadata.finalizers, ['foregroundDeletion'])
    assert.equal(res.body.metadata.generation, 2)
  })

  it('deletes at once with Background', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'c' } })
    const res = await api.delete(`${CMS}/c`, { body: { propagationPolicy: 'Background' } })
    assert.equal(res.body.kind, 'Status')
  })

  it('maps the deprecated orphanDependents, answering 202 when it asks for cascading', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'a' } })
    const orphan = await api.delete(`${CMS}/a`, { body: { orphanDependents: true } })
    assert.deepEqual(orphan.body.metadata.finalizers, ['orphan'])
    await api.post(CMS, { metadata: { name: 'b', finalizers: ['example.com/keep', 'orphan'] } })
    const cascade = await api.delete(`${CMS}/b`, { body: { orphanDependents: false } })
    assert.equal(cascade.status, 202)
    assert.deepEqual(cascade.body.metadata.finalizers, ['example.com/keep'])
  })

  it('refuses orphanDependents together with a policy, and an unknown policy', async () => {
    const api = await server()
    await api.post(CMS, { metadata: { name: 'c' } })
    const both = await api.delete(`${CMS}/c`, { body: { orphanDependents: true, propagationPolicy: 'Orphan' } })
    assert.equal(both.status, 422)
    assert.equal(
      both.body.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    )
    const unknown = await api.delete(`${CMS}/c?propagationPolicy=Later`)
    assert.equal(unknown.status, 422)
    assert.equal(
      unknown.body.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"',
    )
    assert.equal((await api.get(`${CMS}/c`)).status, 200)
  })
})

describe('preconditions', () => {
  it('conflicts on a wrong uid or resourceVersion and deletes with the right ones', async () => {
    const api = await server()
    const created = (await api.post(CMS, { metadata: { name: 'c' } })).body
    const uid = await api.delete(`${CMS}/c`, { body: { preconditions: { uid: 'other' } } })
    assert.equal(uid.status, 409)
    assert.equal(uid.body.message, `Operation cannot be fulfilled on configmaps "c": Precondition failed: UID in precondition: other, UID in object meta: ${created.metadata.uid}`)
    const rv = await api.delete(`${CMS}/c`, { body: { preconditions: { resourceVersion: '1' } } })
    assert.equal(rv.status, 409)
    assert.equal(
      rv.body.message,
      `Operation cannot be fulfilled on configmaps "c": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${created.metadata.resourceVersion}`,
    )
    const ok = await api.delete(`${CMS}/c`, { body: { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.kind, 'Status')
  })

  it('deletes a scheduled pod with a resourceVersion precondition and grace period 0', async () => {
    const api = await server()
    const pod = await createPod(api, 'p', { nodeName: 'node-1' })
    const res = await api.delete(`${PODS}/p`, { body: { gracePeriodSeconds: 0, preconditions: { resourceVersion: pod.metadata.resourceVersion } } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'Status')
  })
})
