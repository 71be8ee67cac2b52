/**
 * The autoscaler's arithmetic: the replica count for a resource metric
 * (tolerance, missing and not-ready pods) and its normalization
 * (stabilization, the scale-up limit, behavior policies), against cases
 * worked out from upstream's rules.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { averageValueReplicas, milliValue, type PodMetrics, utilizationReplicas } from '../../../../core/controllers/workloads/hpa-replicas.js'
import { ScalingMemory } from '../../../../core/controllers/workloads/hpa-scaling.js'
import type { KubeObject } from '../../../../core/machinery/object.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const LONG_AGO = '2026-03-01T11:00:00Z'

function pod(name: string, opts: { phase?: string; ready?: boolean; started?: string; cpu?: string } = {}): KubeObject {
  return {
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: opts.cpu ?? '100m', memory: '64Mi' } } }] },
    status: {
      phase: opts.phase ?? 'Running',
      startTime: opts.started ?? LONG_AGO,
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True', lastTransitionTime: LONG_AGO }],
    },
  }
}

const sample = (value: number): { value: number; timestamp: number; windowMs: number } => ({ value, timestamp: NOW, windowMs: 30_000 })
const metricsOf = (entries: Record<string, number>): PodMetrics => new Map(Object.entries(entries).map(([k, v]) => [k, sample(v)]))

describe('hpa replica calculation', () => {
  it('reads quantities as upstream\'s MilliValue', () => {
    assert.equal(milliValue('250m'), 250)
    assert.equal(milliValue('1'), 1000)
    assert.equal(milliValue('1.5'), 1500)
    assert.equal(milliValue('64Mi'), 64 * 1024 * 1024 * 1000)
    assert.equal(milliValue('0.0001'), 1)
  })

  it('scales by the ratio of utilization to target over the ready pods', () => {
    const pods = [pod('a'), pod('b'), pod('c')]
    const p = utilizationReplicas(3, 50, 'cpu', pods, metricsOf({ a: 100, b: 100, c: 100 }), NOW)
    assert.deepEqual(p, { replicas: 6, utilization: 100, rawAverage: 100 })
  })

  it('keeps the count within the 10 % tolerance', () => {
    const pods = [pod('a'), pod('b')]
    assert.equal(utilizationReplicas(2, 50, 'cpu', pods, metricsOf({ a: 54, b: 54 }), NOW).replicas, 2)
    assert.equal(utilizationReplicas(2, 50, 'cpu', pods, metricsOf({ a: 56, b: 56 }), NOW).replicas, 3)
  })

  it('counts a pod without a sample as using its request on the way down, and nothing on the way up', () => {
    const pods = [pod('a'), pod('b'), pod('c'), pod('d')]
    // Down: 10 % of a 50 % target asks for 1 pod; the missing one at 100 % holds it at 3.
    assert.equal(utilizationReplicas(4, 50, 'cpu', pods, metricsOf({ a: 10, b: 10, c: 10 }), NOW).replicas, 3)
    // Up: 150 % over three pods; the fourth at 0 % makes it 112 %, 2.24 times the target: ceil(2.24 * 4) = 9.
    assert.equal(utilizationReplicas(4, 50, 'cpu', pods, metricsOf({ a: 150, b: 150, c: 150 }), NOW).replicas, 9)
  })

  it('leaves pending and not-yet-ready pods out, counting them at 0 % on a scale-up', () => {
    const pods = [pod('a'), pod('b', { phase: 'Pending' }), pod('c', { ready: false, started: '2026-03-01T11:59:00Z' })]
    // Ready a at 200 % of a 100 % target; b and c count as 0: 200/300 = 0.67, a reversal, so the count stays.
    assert.equal(utilizationReplicas(3, 100, 'cpu', pods, metricsOf({ a: 200, c: 500 }), NOW).replicas, 3)
    // Memory has no readiness rule: c counts.
    assert.equal(averageValueReplicas(2, 100, 'memory', [pod('a'), pod('c', { ready: false, started: '2026-03-01T11:59:00Z' })], metricsOf({ a: 300, c: 300 }), NOW).replicas, 6)
  })

  it('fails with upstream\'s messages', () => {
    assert.throws(() => utilizationReplicas(1, 50, 'cpu', [], metricsOf({}), NOW), /^Error: no pods returned by selector while calculating replica count$/)
    assert.throws(() => utilizationReplicas(1, 50, 'cpu', [pod('a', { phase: 'Pending' })], metricsOf({ a: 1 }), NOW), /did not receive metrics for targeted pods \(pods might be unready\)/)
    const bare: KubeObject = { ...pod('x'), spec: { containers: [{ name: 'app' }] } }
    assert.throws(() => utilizationReplicas(1, 50, 'cpu', [bare], metricsOf({ x: 10 }), NOW), /^Error: missing request for cpu in container app of Pod x$/)
  })
})

describe('hpa normalization', () => {
  it('holds a scale-down at the highest recommendation of the last five minutes', () => {
    const memory = new ScalingMemory()
    memory.recordInitial('k', 5, NOW)
    const first = memory.normalize('k', 5, 2, 1, 10, NOW + 15_000)
    assert.equal(first.replicas, 5)
    assert.deepEqual(first.conditions[0]?.reason, 'ScaleDownStabilized')
    const later = memory.normalize('k', 5, 2, 1, 10, NOW + 301_000)
    assert.equal(later.replicas, 2)
    assert.deepEqual(later.conditions.map((c) => c.reason), ['ReadyForNewScale', 'DesiredWithinRange'])
  })

  it('limits a scale-up to double (at least 4), then to maxReplicas, and a scale-down to minReplicas', () => {
    const memory = new ScalingMemory()
    assert.deepEqual(memory.normalize('a', 1, 10, 1, 20, NOW).replicas, 4)
    assert.deepEqual(memory.normalize('b', 5, 30, 1, 20, NOW).conditions[1]?.reason, 'ScaleUpLimit')
    assert.deepEqual(memory.normalize('c', 10, 30, 1, 12, NOW).replicas, 12)
    assert.deepEqual(memory.normalize('c', 10, 30, 1, 12, NOW).conditions[1]?.reason, 'TooManyReplicas')
    const down = new ScalingMemory().normalize('d', 3, 1, 2, 10, NOW)
    assert.deepEqual([down.replicas, down.conditions[1]?.reason], [2, 'TooFewReplicas'])
  })

  it('applies behavior policies over their periods', () => {
    const memory = new ScalingMemory()
    const behavior = { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max' as const, policies: [{ type: 'Pods' as const, value: 2, periodSeconds: 60 }] } }
    memory.recordInitial('k', 2, NOW)
    const first = memory.normalizeWithBehavior('k', behavior, 2, 10, 1, 20, NOW)
    assert.deepEqual([first.replicas, first.conditions[1]?.reason], [4, 'ScaleUpLimit'])
    memory.recordScale('k', behavior, 2, 4, NOW)
    // Within the minute, the two pods added count against the policy: no more yet.
    assert.equal(memory.normalizeWithBehavior('k', behavior, 4, 10, 1, 20, NOW + 30_000).replicas, 4)
    assert.equal(memory.normalizeWithBehavior('k', behavior, 4, 10, 1, 20, NOW + 61_000).replicas, 6)
  })
})
