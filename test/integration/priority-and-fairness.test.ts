/**
 * API Priority and Fairness through fetch: upstream's configuration created
 * at start, each answer naming its FlowSchema and priority level, a Limited
 * level that rejects, one that queues and refuses a full queue, the exempt
 * level serving the admin meanwhile, and the Dangling condition. Requests
 * are held in flight by a store that waits at a gate.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asAdmin, asUser, CM, cm, FC, routeJaneTo, startGated } from './priority-and-fairness-fixtures.js'
import type { TestClient } from './harness.js'

async function uidOf(api: TestClient, kind: 'flowschemas' | 'prioritylevelconfigurations', name: string): Promise<string> {
  const res = await api.get(`${FC}/${kind}/${name}`, asAdmin)
  assert.equal(res.status, 200)
  return res.body.metadata.uid as string
}

describe('API priority and fairness', () => {
  it('creates upstream\'s mandatory and suggested configuration at start, marked for automatic update', async () => {
    const { api } = await startGated()
    const schemas = await api.get(`${FC}/flowschemas`, asAdmin)
    assert.deepEqual(
      schemas.body.items.map((s: { metadata: { name: string } }) => s.metadata.name).sort(),
      ['catch-all', 'endpoint-controller', 'exempt', 'global-default', 'kube-controller-manager', 'kube-scheduler', 'kube-system-service-accounts', 'probes', 'service-accounts', 'system-leader-election', 'system-node-high', 'system-nodes', 'workload-leader-election'],
    )
    const levels = await api.get(`${FC}/prioritylevelconfigurations`, asAdmin)
    assert.deepEqual(
      levels.body.items.map((l: { metadata: { name: string } }) => l.metadata.name).sort(),
      ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'],
    )
    for (const item of [...schemas.body.items, ...levels.body.items]) assert.equal(item.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true')
  })

  it('names the FlowSchema and priority level of every answer: exempt for the admin, global-default for others', async () => {
    const { api } = await startGated()
    const admin = await api.get(CM, asAdmin)
    assert.equal(admin.headers.get('x-kubernetes-pf-flowschema-uid'), await uidOf(api, 'flowschemas', 'exempt'))
    assert.equal(admin.headers.get('x-kubernetes-pf-prioritylevel-uid'), await uidOf(api, 'prioritylevelconfigurations', 'exempt'))
    const user = await api.get(CM, asUser)
    assert.equal(user.headers.get('x-kubernetes-pf-flowschema-uid'), await uidOf(api, 'flowschemas', 'global-default'))
    assert.equal(user.headers.get('x-kubernetes-pf-prioritylevel-uid'), await uidOf(api, 'prioritylevelconfigurations', 'global-default'))
  })

  it('refuses with 429 what a full Reject level cannot run, stores nothing of it, and serves the exempt admin meanwhile', async () => {
    const { api, storage } = await startGated({ serving: { maxInFlight: { readOnly: 1, mutating: 1 } } })
    await routeJaneTo(api, { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } })
    const held = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(1)
    const refused = await api.post(CM, cm('refused'), asUser)
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.equal(refused.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(refused.text, 'Too many requests, please try again later.\n')
    assert.equal(refused.headers.get('x-kubernetes-pf-prioritylevel-uid'), await uidOf(api, 'prioritylevelconfigurations', 'jane-level'))
    const admin = api.get(`${CM}/slow`, asAdmin)
    await storage.whenHeld(2)
    const metrics = await api.get('/metrics', asAdmin)
    assert.match(metrics.text, /apiserver_flowcontrol_rejected_requests_total\{flow_schema="jane",priority_level="jane-level",reason="concurrency-limit"\} 1/)
    // Upstream's gauges of seats in use are by priority level and flow schema, with their stability level first.
    assert.match(metrics.text, /apiserver_flowcontrol_current_executing_seats\{flow_schema="jane",priority_level="jane-level"\} 1/)
    assert.match(metrics.text, /# HELP apiserver_flowcontrol_dispatched_requests_total \[BETA\] /)
    storage.open()
    assert.equal((await held).status, 200)
    assert.equal((await admin).status, 200)
    assert.equal((await api.get(`${CM}/refused`, asAdmin)).status, 404, 'the refused create stored nothing')
  })

  it('queues a request until a seat is free, and refuses one whose queue is full', async () => {
    const { api, storage } = await startGated({ serving: { maxInFlight: { readOnly: 1, mutating: 1 } } })
    await routeJaneTo(api, {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } } },
    })
    const held = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(1)
    const queued = api.get(`${CM}/slow`, asUser)
    // Once the queue of one holds the second request, a third finds it full.
    const inQueue = /apiserver_flowcontrol_current_inqueue_requests\{flow_schema="jane",priority_level="jane-level"\} 1/
    for (let attempt = 0; !inQueue.test((await api.get('/metrics', asAdmin)).text) && attempt < 200; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10))
    // Executing (the held read and this scrape, which is exempt) and waiting requests are counted apart, as upstream's filter does.
    const busy = (await api.get('/metrics', asAdmin)).text
    assert.match(busy, /^apiserver_current_inflight_requests\{request_kind="readOnly"\} 2$/m)
    assert.match(busy, /^apiserver_current_inqueue_requests\{request_kind="readOnly"\} 1$/m)
    const refused = await api.get(`${CM}/other`, asUser)
    assert.equal(refused.status, 429)
    storage.open()
    assert.equal((await held).status, 200)
    await storage.whenHeld(1)
    storage.open()
    assert.equal((await queued).status, 200, 'the queued request ran once the seat was free')
    const metrics = await api.get('/metrics', asAdmin)
    assert.match(metrics.text, /apiserver_flowcontrol_rejected_requests_total\{flow_schema="jane",priority_level="jane-level",reason="queue-full"\} 1/)
  })

  it('marks a FlowSchema whose priority level does not exist Dangling, and classifies past it', async () => {
    const { api } = await startGated()
    const schema = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'dangling' },
      spec: { priorityLevelConfiguration: { name: 'missing' }, matchingPrecedence: 10, rules: [{ subjects: [{ kind: 'Group', group: { name: '*' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }] },
    }
    assert.equal((await api.post(`${FC}/flowschemas`, schema, asAdmin)).status, 201)
    let condition: Record<string, string> | undefined
    for (let attempt = 0; !condition && attempt < 200; attempt += 1) {
      const res = await api.get(`${FC}/flowschemas/dangling`, asAdmin)
      condition = (res.body.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Dangling')
      if (!condition) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.deepEqual(
      { status: condition?.status, reason: condition?.reason, message: condition?.message },
      { status: 'True', reason: 'NotFound', message: 'This FlowSchema references the PriorityLevelConfiguration object named "missing" but there is no such object' },
    )
    const user = await api.get(CM, asUser)
    assert.equal(user.headers.get('x-kubernetes-pf-flowschema-uid'), await uidOf(api, 'flowschemas', 'global-default'))
  })

  it('writes each FlowSchema\'s Dangling condition once at start-up, and again when its level comes', async () => {
    const { api } = await startGated()
    const danglingOf = async (name: string): Promise<string | undefined> => {
      const res = await api.get(`${FC}/flowschemas/${name}`, asAdmin)
      return (res.body.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Dangling')?.status
    }
    const names = ((await api.get(`${FC}/flowschemas`, asAdmin)).body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)
    for (const name of names) {
      for (let attempt = 0; (await danglingOf(name)) !== 'False' && attempt < 200; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.equal(await danglingOf(name), 'False', name)
    }
    // The store's own count of FlowSchema updates: one status write per schema, none repeated.
    const updates = (await api.get('/metrics', asAdmin)).text.match(/^etcd_requests_total\{operation="update",type="flowschemas\.flowcontrol\.apiserver\.k8s\.io"\} (\d+)$/m)
    assert.equal(Number(updates?.[1]), names.length)

    const schema = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'waits-for-level' },
      spec: { priorityLevelConfiguration: { name: 'later' }, matchingPrecedence: 20, rules: [] },
    }
    assert.equal((await api.post(`${FC}/flowschemas`, schema, asAdmin)).status, 201)
    for (let attempt = 0; (await danglingOf('waits-for-level')) !== 'True' && attempt < 200; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(await danglingOf('waits-for-level'), 'True')
    const level = { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } }
    assert.equal((await api.post(`${FC}/prioritylevelconfigurations`, { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'later' }, spec: level }, asAdmin)).status, 201)
    for (let attempt = 0; (await danglingOf('waits-for-level')) !== 'False' && attempt < 200; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(await danglingOf('waits-for-level'), 'False')
  })
})
