/**
 * Leases, events (both APIs), priority classes, disruption budgets and
 * autoscalers through the API: the defaults read back, the refusals (with
 * nothing stored), the updates and what they may not change, the deletes.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases'
const CORE_EVENTS = '/api/v1/namespaces/default/events'
const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events'
const PRIORITY_CLASSES = '/apis/scheduling.k8s.io/v1/priorityclasses'
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets'
const HPAS_V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers'
const HPAS_V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers'

let client: TestClient

before(async () => {
  client = await startServer()
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

async function assertAbsent(path: string): Promise<void> {
  assert.equal((await client.get(path)).status, 404, `${path} was stored`)
}

describe('leases', () => {
  it('stores a lease without the gated coordination fields, renews it and deletes it', async () => {
    const created = await client.post(LEASES, {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, strategy: 'OldestEmulationVersion', preferredHolder: 'b' },
    })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual((await client.get(`${LEASES}/leader`)).body.spec, { holderIdentity: 'a', leaseDurationSeconds: 15 })
    const renewed = await client.put(`${LEASES}/leader`, { ...created.body, spec: { ...created.body.spec, holderIdentity: 'b', leaseTransitions: 1 } })
    assert.equal(renewed.status, 200, renewed.text)
    assert.equal((await client.get(`${LEASES}/leader`)).body.spec.holderIdentity, 'b')
    const broken = await client.put(`${LEASES}/leader`, { ...renewed.body, spec: { ...renewed.body.spec, leaseTransitions: -1 } })
    assert.equal(broken.status, 422)
    assert.deepEqual(causes(broken.body), ['spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'])
    assert.equal((await client.delete(`${LEASES}/leader`)).status, 200)
    await assertAbsent(`${LEASES}/leader`)
  })

  it('refuses a lease that lasts no time, and stores nothing', async () => {
    const res = await client.post(LEASES, { metadata: { name: 'short' }, spec: { leaseDurationSeconds: 0 } })
    assert.equal(res.status, 422)
    assert.equal(res.body.message, 'Lease.coordination.k8s.io "short" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0')
    await assertAbsent(`${LEASES}/short`)
  })
})

const newEvent = (name: string, fields: Record<string, unknown> = {}) => ({
  metadata: { name },
  regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
  note: 'Started container',
  reason: 'Started',
  type: 'Normal',
  action: 'Start',
  reportingController: 'example.com/kubelet',
  reportingInstance: 'node-1',
  eventTime: '2024-05-01T10:00:00.000000Z',
  ...fields,
})

describe('events', () => {
  it('takes an old-style core event with only the namespace checked', async () => {
    const ok = await client.post(CORE_EVENTS, { metadata: { name: 'old' }, involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' }, type: 'Whatever' })
    assert.equal(ok.status, 201, ok.text)
    const elsewhere = await client.post(CORE_EVENTS, { metadata: { name: 'elsewhere' }, involvedObject: { kind: 'Pod', name: 'web', namespace: 'other' } })
    assert.equal(elsewhere.status, 422)
    assert.deepEqual(causes(elsewhere.body), ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'])
    await assertAbsent(`${CORE_EVENTS}/elsewhere`)
  })

  it('wants the reporter of a new-style event sent through core/v1', async () => {
    const res = await client.post(CORE_EVENTS, {
      metadata: { name: 'half-new' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      reportingComponent: 'example.com/c',
      reportingInstance: 'i',
      reason: 'Started',
    })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), ['action: Required value'])
    await assertAbsent(`${CORE_EVENTS}/half-new`)
  })

  it('refuses an events.k8s.io event of an unknown type or with deprecated fields, naming core fields as upstream does', async () => {
    const res = await client.post(EVENTS, newEvent('odd', { type: 'Odd', deprecatedCount: 2, note: 'n'.repeat(1025) }))
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'message: Invalid value: "": can have at most 1024 characters',
      'type: Invalid value: "": has invalid value: Odd',
      'count: Invalid value: "": needs to be unset',
    ])
    await assertAbsent(`${EVENTS}/odd`)
  })

  it('lets an events.k8s.io update add a series, and refuses a changed note', async () => {
    const created = await client.post(EVENTS, newEvent('repeating'))
    assert.equal(created.status, 201, created.text)
    const series = { count: 2, lastObservedTime: '2024-05-01T10:05:00.000000Z' }
    const again = await client.put(`${EVENTS}/repeating`, { ...created.body, series })
    assert.equal(again.status, 200, again.text)
    assert.deepEqual((await client.get(`${EVENTS}/repeating`)).body.series, series)
    const rewritten = await client.put(`${EVENTS}/repeating`, { ...again.body, note: 'something else' })
    assert.equal(rewritten.status, 422)
    assert.deepEqual(causes(rewritten.body), ['message: Invalid value: "something else": field is immutable'])
    // The core API is lax about updates, as upstream keeps it for old clients.
    const core = await client.get(`${CORE_EVENTS}/repeating`)
    const viaCore = await client.put(`${CORE_EVENTS}/repeating`, { ...core.body, message: 'something else' })
    assert.equal(viaCore.status, 200, viaCore.text)
    assert.equal((await client.delete(`${EVENTS}/repeating`)).status, 200)
    await assertAbsent(`${CORE_EVENTS}/repeating`)
  })
})

describe('priority classes', () => {
  it('defaults the preemption policy, lets the description change, and fixes value and policy', async () => {
    const created = await client.post(PRIORITY_CLASSES, { metadata: { name: 'batch' }, value: 1000 })
    assert.equal(created.status, 201, created.text)
    assert.equal((await client.get(`${PRIORITY_CLASSES}/batch`)).body.preemptionPolicy, 'PreemptLowerPriority')
    const described = await client.put(`${PRIORITY_CLASSES}/batch`, { ...created.body, description: 'batch jobs' })
    assert.equal(described.status, 200, described.text)
    const changed = await client.put(`${PRIORITY_CLASSES}/batch`, { ...described.body, value: 2000, preemptionPolicy: 'Never' })
    assert.equal(changed.status, 422)
    assert.deepEqual(causes(changed.body), [
      'value: Forbidden: may not be changed in an update.',
      'preemptionPolicy: Invalid value: "Never": field is immutable',
    ])
    assert.equal((await client.get(`${PRIORITY_CLASSES}/batch`)).body.value, 1000)
    assert.equal((await client.delete(`${PRIORITY_CLASSES}/batch`)).status, 200)
    await assertAbsent(`${PRIORITY_CLASSES}/batch`)
  })

  it('refuses values above one billion and system- names, and stores nothing', async () => {
    const high = await client.post(PRIORITY_CLASSES, { metadata: { name: 'too-high' }, value: 1_000_000_001 })
    assert.equal(high.status, 422)
    assert.deepEqual(causes(high.body), ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000'])
    await assertAbsent(`${PRIORITY_CLASSES}/too-high`)
    const system = await client.post(PRIORITY_CLASSES, { metadata: { name: 'system-mine' }, value: 1 })
    assert.equal(system.status, 422)
    await assertAbsent(`${PRIORITY_CLASSES}/system-mine`)
  })

  it('keeps the system’s own classes from deletion', async () => {
    // The server created it at start.
    assert.equal((await client.get(`${PRIORITY_CLASSES}/system-node-critical`)).status, 200)
    const res = await client.delete(`${PRIORITY_CLASSES}/system-node-critical`)
    assert.equal(res.status, 403)
    assert.equal(
      res.body.message,
      'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted',
    )
    assert.equal((await client.get(`${PRIORITY_CLASSES}/system-node-critical`)).status, 200)
  })
})

describe('pod disruption budgets', () => {
  const selector = { matchLabels: { app: 'web' } }

  it('stores a budget without the status a client sent, and lets it change', async () => {
    const created = await client.post(PDBS, { metadata: { name: 'web' }, spec: { minAvailable: '50%', selector }, status: { disruptionsAllowed: 9 } })
    assert.equal(created.status, 201, created.text)
    const read = await client.get(`${PDBS}/web`)
    assert.deepEqual(read.body.spec, { minAvailable: '50%', selector })
    // The status sent is dropped; upstream's zero status carries its four counts (ints Go always writes).
    assert.deepEqual(read.body.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 })
    const swapped = await client.put(`${PDBS}/web`, { ...read.body, spec: { maxUnavailable: 1, selector } })
    assert.equal(swapped.status, 200, swapped.text)
    assert.equal(swapped.body.metadata.generation, 2)
    const both = await client.patch(`${PDBS}/web`, { spec: { minAvailable: 1 } }, 'application/merge-patch+json')
    assert.equal(both.status, 422)
    assert.equal(both.body.details.causes[0].message.endsWith('minAvailable and maxUnavailable cannot be both set'), true)
    assert.equal((await client.delete(`${PDBS}/web`)).status, 200)
    await assertAbsent(`${PDBS}/web`)
  })

  it('refuses a budget over 100% or with an unknown eviction policy, and stores nothing', async () => {
    const res = await client.post(PDBS, { metadata: { name: 'greedy' }, spec: { minAvailable: '120%', unhealthyPodEvictionPolicy: 'Never' } })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ])
    await assertAbsent(`${PDBS}/greedy`)
  })
})

describe('horizontal pod autoscalers', () => {
  const scaleTargetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }

  it('fills minReplicas, a CPU metric and the behavior rules as autoscaling/v2 does', async () => {
    const created = await client.post(HPAS_V2, {
      metadata: { name: 'web' },
      spec: { scaleTargetRef, maxReplicas: 5, behavior: { scaleDown: { stabilizationWindowSeconds: 120 } } },
    })
    assert.equal(created.status, 201, created.text)
    const spec = (await client.get(`${HPAS_V2}/web`)).body.spec
    assert.equal(spec.minReplicas, 1)
    assert.deepEqual(spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }])
    assert.deepEqual(spec.behavior.scaleDown, { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }], stabilizationWindowSeconds: 120 })
    assert.equal(spec.behavior.scaleUp.selectPolicy, 'Max')
    assert.equal(spec.behavior.scaleUp.policies.length, 2)
  })

  it('refuses bad bounds and a metric without its source, and stores nothing', async () => {
    const res = await client.post(HPAS_V2, {
      metadata: { name: 'bad' },
      spec: { scaleTargetRef: { name: 'web' }, minReplicas: 4, maxReplicas: 2, metrics: [{ type: 'Pods' }] },
    })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
      'spec.scaleTargetRef.kind: Required value',
      'spec.metrics[0].pods: Required value: must populate information for the given metric source',
    ])
    await assertAbsent(`${HPAS_V2}/bad`)
  })

  it('checks a v1 autoscaler on its v2 form, and updates it', async () => {
    const bad = await client.post(HPAS_V1, { metadata: { name: 'v1-bad' }, spec: { scaleTargetRef, maxReplicas: 3, targetCPUUtilizationPercentage: 0 } })
    assert.equal(bad.status, 422)
    assert.deepEqual(causes(bad.body), ['spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0'])
    await assertAbsent(`${HPAS_V1}/v1-bad`)
    const created = await client.post(HPAS_V1, { metadata: { name: 'v1' }, spec: { scaleTargetRef, maxReplicas: 3 } })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.spec.minReplicas, 1)
    const lowered = await client.put(`${HPAS_V1}/v1`, { ...created.body, spec: { ...created.body.spec, maxReplicas: 0 } })
    assert.equal(lowered.status, 422)
    assert.deepEqual(causes(lowered.body), [
      'spec.maxReplicas: Invalid value: 0: must be greater than 0',
      'spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`',
    ])
    const raised = await client.put(`${HPAS_V1}/v1`, { ...created.body, spec: { ...created.body.spec, maxReplicas: 6 } })
    assert.equal(raised.status, 200, raised.text)
    assert.equal((await client.get(`${HPAS_V2}/v1`)).body.spec.maxReplicas, 6)
    assert.equal((await client.delete(`${HPAS_V1}/v1`)).status, 200)
    await assertAbsent(`${HPAS_V2}/v1`)
  })
})
