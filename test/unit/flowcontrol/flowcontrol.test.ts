import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BOOTSTRAP_FLOW_SCHEMAS, BOOTSTRAP_PRIORITY_LEVELS } from '../../../core/flowcontrol/bootstrap-objects.js'
import { byPrecedence, compileFlowSchema } from '../../../core/flowcontrol/classify.js'
import { allocateSeats, DemandIntegrator, levelLimits } from '../../../core/flowcontrol/concurrency.js'
import { dealHand, flowHash, QueueSet } from '../../../core/flowcontrol/queue-set.js'
import type { RequestInfo } from '../../../core/machinery/request-info.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const object = (kind: string, name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind, metadata: { name, uid: name }, spec })
const schemas = BOOTSTRAP_FLOW_SCHEMAS.map((o) => object('FlowSchema', o.name, o.spec)).sort(byPrecedence).map(compileFlowSchema)
const levels = BOOTSTRAP_PRIORITY_LEVELS.map((o) => object('PriorityLevelConfiguration', o.name, o.spec))

const resource = (verb: string, apiGroup: string, resource: string, namespace = ''): RequestInfo => ({
  isResourceRequest: true,
  path: '',
  verb,
  apiPrefix: 'api',
  apiGroup,
  apiVersion: 'v1',
  namespace,
  resource,
  subresource: '',
  name: '',
  parts: [],
})
const nonResource = (path: string): RequestInfo => ({ ...resource('get', '', ''), isResourceRequest: false, path })
const firstMatch = (username: string, groups: string[], info: RequestInfo): string | undefined =>
  schemas.find((s) => s.matches({ username, groups }, info))?.name

describe('flow schema matching with upstream\'s suggested configuration', () => {
  it('puts each kind of caller where upstream does', () => {
    const authenticated = ['system:authenticated']
    assert.equal(firstMatch('admin', ['system:masters', ...authenticated], resource('delete', '', 'pods', 'default')), 'exempt')
    assert.equal(firstMatch('system:anonymous', ['system:unauthenticated'], nonResource('/readyz')), 'probes')
    assert.equal(firstMatch('system:node:n1', ['system:nodes', ...authenticated], resource('update', '', 'nodes')), 'system-node-high')
    assert.equal(firstMatch('system:node:n1', ['system:nodes', ...authenticated], resource('get', '', 'pods', 'default')), 'system-nodes')
    assert.equal(firstMatch('system:kube-controller-manager', authenticated, resource('update', 'coordination.k8s.io', 'leases', 'kube-system')), 'system-leader-election')
    assert.equal(firstMatch('system:kube-controller-manager', authenticated, resource('list', 'apps', 'deployments')), 'kube-controller-manager')
    assert.equal(firstMatch('system:serviceaccount:kube-system:foo', ['system:serviceaccounts', ...authenticated], resource('list', '', 'pods')), 'kube-system-service-accounts')
    assert.equal(firstMatch('system:serviceaccount:app:foo', ['system:serviceaccounts', ...authenticated], resource('list', '', 'pods')), 'service-accounts')
    assert.equal(firstMatch('jane', authenticated, resource('get', '', 'configmaps', 'default')), 'global-default')
  })

  it('matches cluster-scoped requests only where clusterScope is set, and subresources as resource/subresource', () => {
    const schema = compileFlowSchema(object('FlowSchema', 'x', {
      rules: [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods/status'], namespaces: ['*'] }] }],
    }))
    const user = { username: 'jane', groups: [] }
    assert.equal(schema.matches(user, { ...resource('update', '', 'pods', 'ns'), subresource: 'status' }), true)
    assert.equal(schema.matches(user, resource('update', '', 'pods', 'ns')), false)
    assert.equal(schema.matches(user, { ...resource('update', '', 'pods'), subresource: 'status' }), false)
  })

  it('tells flows apart by user or namespace', () => {
    const byNamespace = schemas.find((s) => s.name === 'kube-scheduler')
    const byUser = schemas.find((s) => s.name === 'global-default')
    const info = resource('get', '', 'pods', 'team-a')
    assert.equal(byNamespace?.distinguish({ username: 'x', groups: [] }, info), 'team-a')
    assert.equal(byUser?.distinguish({ username: 'x', groups: [] }, info), 'x')
  })
})

describe('concurrency limits', () => {
  it('shares the server\'s 600 seats by nominal concurrency shares, as upstream computes them', () => {
    const limits = Object.fromEntries(levelLimits(levels, 600).map((l) => [l.name, l]))
    // Shares: catch-all 5, system 30, node-high 40, leader-election 10, workload-high 40, workload-low 100, global-default 20 (245).
    assert.equal(limits['global-default']?.nominalCL, Math.ceil((600 * 20) / 245))
    assert.equal(limits['workload-low']?.nominalCL, Math.ceil((600 * 100) / 245))
    assert.equal(limits['workload-low']?.minCL, limits['workload-low']!.nominalCL - Math.round((limits['workload-low']!.nominalCL * 90) / 100))
    assert.equal(limits['exempt']?.exempt, true)
    assert.equal(limits['catch-all']?.queuing, undefined, 'catch-all rejects at once')
    assert.deepEqual(limits['leader-election']?.queuing, { queues: 16, handSize: 4, queueLengthLimit: 50 })
  })

  it('deals seats in proportion to demand within each level\'s bounds, summing to the total', () => {
    const seats = allocateSeats(100, [
      { lower: 10, upper: 80, target: 90 },
      { lower: 5, upper: 60, target: 10 },
      { lower: 20, upper: 20, target: 0 },
    ])
    assert.equal(Math.round(seats.reduce((a, b) => a + b, 0)), 100)
    assert.equal(seats[2], 20)
    assert.ok((seats[0] as number) > (seats[1] as number))
    assert.deepEqual(allocateSeats(10, [{ lower: 8, upper: 9, target: 1 }, { lower: 8, upper: 9, target: 1 }]), [8, 8], 'lower bounds win when they exceed the total')
  })

  it('integrates demand over time into mean plus standard deviation', () => {
    let t = 0
    const demand = new DemandIntegrator(() => t)
    demand.set(4)
    t = 10
    demand.set(0)
    t = 20
    // Mean 2, standard deviation 2.
    assert.equal(demand.reset(), 4)
  })
})

describe('shuffle sharding and queues', () => {
  it('deals a flow the same distinct hand every time', () => {
    const hand = dealHand(flowHash('global-default\u0000jane'), 128, 6)
    assert.equal(new Set(hand).size, 6)
    assert.ok(hand.every((q) => q >= 0 && q < 128))
    assert.deepEqual(dealHand(flowHash('global-default\u0000jane'), 128, 6), hand)
    assert.notDeepEqual(dealHand(flowHash('global-default\u0000john'), 128, 6), hand)
  })

  it('runs, queues, refuses a full queue, and hands a freed seat to the next queue in turn', async () => {
    const set = new QueueSet(1, { queues: 1, handSize: 1, queueLengthLimit: 1 })
    const first = set.acquire('a', 60_000)
    assert.equal(typeof first, 'object', 'a free seat is given at once')
    const second = set.acquire('b', 60_000)
    assert.ok(second instanceof Promise)
    assert.equal(set.acquire('c', 60_000), 'queue-full')
    ;(first as { release(): void }).release()
    const ticket = await second
    assert.equal(typeof ticket, 'object')
    assert.equal(set.executing, 1)
  })

  it('queues flows in queues made as they first wait, serves them in turn and lets a wait time out', async () => {
    const set = new QueueSet(1, { queues: 64, handSize: 1, queueLengthLimit: 2 })
    const running = set.acquire('seated', 60_000) as { release(): void }
    const waiting = ['a', 'b', 'c'].map((flow) => set.acquire(flow, 60_000))
    const expiring = set.acquire('late', 10)
    assert.ok(waiting.every((w) => w instanceof Promise) && expiring instanceof Promise)
    assert.equal(set.waiting, 4)
    assert.equal(await expiring, 'time-out')
    assert.equal(set.waiting, 3)
    // Served one at a time, in the order of their queues: each releases its seat once it has it.
    const served: string[] = []
    const done = waiting.map((next, i) =>
      (next as Promise<{ release(): void }>).then((ticket) => {
        served.push(['a', 'b', 'c'][i]!)
        assert.equal(set.executing, 1)
        setImmediate(() => ticket.release())
      }),
    )
    running.release()
    await Promise.all(done)
    assert.deepEqual(served.sort(), ['a', 'b', 'c'])
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(set.waiting, 0)
    assert.equal(set.executing, 0)
  })

  it('refuses at once when the level rejects instead of queuing', () => {
    const set = new QueueSet(1, undefined)
    assert.equal(typeof set.acquire('a', 1000), 'object')
    assert.equal(set.acquire('a', 1000), 'concurrency-limit')
  })
})
