/**
 * `pods/<name>/eviction`: the delete `kubectl drain` sends, with the
 * Eviction body's DeleteOptions (dryRun from there or the query) and the
 * pod's disruption budget deciding.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets'
const MERGE = 'application/merge-patch+json'

const eviction = (name: string, deleteOptions?: Record<string, unknown>) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name, namespace: 'default' },
  ...(deleteOptions ? { deleteOptions } : {}),
})

async function server(): Promise<TestClient> {
  return startServer({ garbageCollector: false })
}

async function pendingPod(api: TestClient, name: string) {
  const res = await api.post(PODS, { metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** A pod on a node, running and ready: one a disruption budget counts. */
async function runningPod(api: TestClient, name: string) {
  const res = await api.post(PODS, { metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } })
  assert.equal(res.status, 201, res.text)
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }
  const patched = await api.patch(`${PODS}/${name}/status`, { status }, MERGE)
  assert.equal(patched.status, 200, patched.text)
  return patched.body
}

/** A budget over app=web whose status says `allowed` disruptions, as the disruption controller would have written it. */
async function budget(api: TestClient, allowed: number, observed = true) {
  const created = await api.post(PDBS, { metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } })
  assert.equal(created.status, 201, created.text)
  if (!observed) return created.body
  const status = { observedGeneration: created.body.metadata.generation, disruptionsAllowed: allowed, currentHealthy: 1 + allowed, desiredHealthy: 1, expectedPods: 1 + allowed }
  const res = await api.patch(`${PDBS}/web/status`, { status }, MERGE)
  assert.equal(res.status, 200, res.text)
  return res.body
}

describe('evicting a pod', () => {
  it('deletes a pod no budget protects, answering a Success Status with 201', async () => {
    const api = await server()
    await pendingPod(api, 'p')
    const res = await api.post(`${PODS}/p/eviction`, eviction('p'))
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 })
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('keeps the pod for a dry run from the body or from the query', async () => {
    const api = await server()
    const pod = await pendingPod(api, 'p')
    const body = await api.post(`${PODS}/p/eviction`, eviction('p', { dryRun: ['All'] }))
    assert.equal(body.status, 201, body.text)
    const query = await api.post(`${PODS}/p/eviction?dryRun=All`, eviction('p'))
    assert.equal(query.status, 201, query.text)
    assert.deepEqual((await api.get(`${PODS}/p`)).body, pod)
  })

  it('keeps the pod and the budget for a dry run the budget allows', async () => {
    const api = await server()
    const pod = await runningPod(api, 'p')
    const pdb = await budget(api, 1)
    const res = await api.post(`${PODS}/p/eviction`, eviction('p', { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] }))
    assert.equal(res.status, 201, res.text)
    assert.deepEqual((await api.get(`${PODS}/p`)).body, pod)
    assert.deepEqual((await api.get(`${PDBS}/web`)).body, pdb)
  })

  it('uses up a disruption of the budget and marks the pod as a disruption target', async () => {
    const api = await server()
    await runningPod(api, 'p')
    await budget(api, 1)
    const res = await api.post(`${PODS}/p/eviction`, eviction('p'))
    assert.equal(res.status, 201, res.text)
    const pod = (await api.get(`${PODS}/p`)).body
    assert.ok(pod.metadata.deletionTimestamp, 'a scheduled pod is deleted gracefully')
    const target = pod.status.conditions.find((c: { type: string }) => c.type === 'DisruptionTarget')
    assert.equal(target.status, 'True')
    assert.equal(target.reason, 'EvictionByEvictionAPI')
    assert.equal(target.message, 'Eviction API: evicting')
    const status = (await api.get(`${PDBS}/web`)).body.status
    assert.equal(status.disruptionsAllowed, 0)
    assert.deepEqual(Object.keys(status.disruptedPods), ['p'])
    assert.equal(status.conditions.find((c: { type: string }) => c.type === 'DisruptionAllowed').status, 'False')
  })

  it('refuses with 429 when the budget allows no disruption, and keeps the pod', async () => {
    const api = await server()
    const pod = await runningPod(api, 'p')
    await budget(api, 0)
    const res = await api.post(`${PODS}/p/eviction`, eviction('p'))
    assert.equal(res.status, 429, res.text)
    assert.equal(res.body.reason, 'TooManyRequests')
    assert.equal(res.body.message, "Cannot evict pod as it would violate the pod's disruption budget.")
    assert.deepEqual(res.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }])
    assert.deepEqual((await api.get(`${PODS}/p`)).body, pod)
  })

  it('refuses with 429 and Retry-After while the budget is not yet observed, and keeps the pod', async () => {
    const api = await server()
    const pod = await runningPod(api, 'p')
    await budget(api, 0, false)
    const res = await api.post(`${PODS}/p/eviction`, eviction('p'))
    assert.equal(res.status, 429, res.text)
    assert.equal(res.headers.get('retry-after'), '10')
    assert.equal(res.body.details.causes[0].message, 'The disruption budget web is still being processed by the server.')
    assert.deepEqual((await api.get(`${PODS}/p`)).body, pod)
  })

  it('refuses a name that differs from the URL, or dry runs that disagree, with 400, and keeps the pod', async () => {
    const api = await server()
    const pod = await pendingPod(api, 'p')
    const name = await api.post(`${PODS}/p/eviction`, eviction('q'))
    assert.equal(name.status, 400)
    assert.equal(name.body.message, 'name in URL does not match name in Eviction object')
    const dry = await api.post(`${PODS}/p/eviction?dryRun=All`, eviction('p', { dryRun: ['Some'] }))
    assert.equal(dry.status, 400)
    assert.equal(dry.body.message, 'Non-matching dry-run options in request and content: [All] and [Some]')
    const invalid = await api.post(`${PODS}/p/eviction`, eviction('p', { dryRun: ['Some'] }))
    assert.equal(invalid.status, 422)
    assert.equal(invalid.body.message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"')
    assert.deepEqual((await api.get(`${PODS}/p`)).body, pod)
  })

  it('answers 404 for a pod that does not exist', async () => {
    const api = await server()
    const res = await api.post(`${PODS}/nope/eviction`, eviction('nope'))
    assert.equal(res.status, 404)
    assert.equal(res.body.message, 'pods "nope" not found')
  })
})
