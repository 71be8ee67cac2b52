/**
 * The horizontal pod autoscaler's replica count for a resource metric
 * (upstream's ReplicaCalculator and its metrics utilities): the target's
 * pods sorted into ready, not yet ready, missing a sample and ignored; the
 * usage over the requests (Utilization) or per pod (AverageValue) against
 * the target; no change within the 10 % tolerance; and, when samples are
 * missing or pods are not ready, the second pass upstream makes, which
 * assumes the least favourable usage for them and never turns a scale-up
 * into a scale-down or the reverse.
 *
 * Values are milli-units (upstream's MilliValue), whole numbers throughout.
 */
import type { KubeObject } from '../../machinery/object.js'
import { parseQuantity } from '../../cel/library/quantity.js'

/** Within this fraction of the target nothing changes (upstream's --horizontal-pod-autoscaler-tolerance). */
export const TOLERANCE = 0.1
/** A pod's CPU samples are doubted for this long after it starts (--horizontal-pod-autoscaler-cpu-initialization-period). */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000
/** A pod not ready this soon after it started has never been ready (--horizontal-pod-autoscaler-initial-readiness-delay). */
export const INITIAL_READINESS_DELAY_MS = 30_000

/** One pod's sample: the summed usage of its containers, when it was taken and over what window. */
export interface PodMetric {
  value: number
  timestamp: number
  windowMs: number
}

export type PodMetrics = Map<string, PodMetric>

/** A quantity's value in thousandths, rounded up as upstream's MilliValue rounds. NaN when it is not a quantity. */
export function milliValue(raw: unknown): number {
  if (typeof raw === 'number') return Math.ceil(raw * 1000)
  if (typeof raw !== 'string') return Number.NaN
  const q = parseQuantity(raw.trim())
  if (!q) return Number.NaN
  const numerator = q.numerator * 1000n
  const denominator = 10n ** BigInt(q.scale)
  let milli = numerator / denominator
  if (numerator % denominator !== 0n && numerator > 0n) milli += 1n
  return Number(milli)
}

type Obj = Record<string, unknown>
const statusOf = (pod: KubeObject): Obj => (pod['status'] as Obj | undefined) ?? {}
const specOf = (pod: KubeObject): Obj => (pod['spec'] as Obj | undefined) ?? {}

interface PodGroups {
  readyCount: number
  unready: Set<string>
  missing: Set<string>
  ignored: Set<string>
}

/**
 * Sorts the pods as upstream's groupPods: deleted or failed pods are
 * ignored; pending ones are not ready; a pod without a sample is missing;
 * for CPU, a pod still starting counts as not ready while it is not Ready
 * or its sample predates its last readiness change, and after that only
 * when it has never been ready.
 */
function groupPods(pods: readonly KubeObject[], metrics: PodMetrics, resource: string, now: number): PodGroups {
  const groups: PodGroups = { readyCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() }
  for (const pod of pods) {
    const name = pod.metadata.name ?? ''
    const status = statusOf(pod)
    if (pod.metadata.deletionTimestamp || status['phase'] === 'Failed') {
      groups.ignored.add(name)
      continue
    }
    if (status['phase'] === 'Pending') {
      groups.unready.add(name)
      continue
    }
    const metric = metrics.get(name)
    if (!metric) {
      groups.missing.add(name)
      continue
    }
    if (resource === 'cpu' && cpuSampleDoubtful(status, metric, now)) {
      groups.unready.add(name)
      continue
    }
    groups.readyCount++
  }
  return groups
}

function cpuSampleDoubtful(status: Obj, metric: PodMetric, now: number): boolean {
  const ready = ((status['conditions'] as Obj[] | undefined) ?? []).find((c) => c['type'] === 'Ready')
  const started = Date.parse(String(status['startTime'] ?? ''))
  if (!ready || !Number.isFinite(started)) return true
  const transition = Date.parse(String(ready['lastTransitionTime'] ?? '')) || 0
  if (started + CPU_INITIALIZATION_PERIOD_MS > now) return ready['status'] === 'False' || metric.timestamp < transition + metric.windowMs
  return ready['status'] === 'False' && started + INITIAL_READINESS_DELAY_MS > transition
}

/** Each pod's request for the resource, summed over its containers (and sidecar init containers), or upstream's error for a container without one. */
function podRequests(pods: readonly KubeObject[], resource: string): Map<string, number> {
  const requests = new Map<string, number>()
  for (const pod of pods) {
    const spec = specOf(pod)
    const containers = [
      ...((spec['containers'] as Obj[] | undefined) ?? []),
      ...((spec['initContainers'] as Obj[] | undefined) ?? []).filter((c) => c['restartPolicy'] === 'Always'),
    ]
    let sum = 0
    for (const c of containers) {
      const request = ((c['resources'] as Obj | undefined)?.['requests'] as Obj | undefined)?.[resource]
      if (request === undefined) throw new Error(`missing request for ${resource} in container ${String(c['name'])} of Pod ${pod.metadata.name}`)
      sum += milliValue(request)
    }
    requests.set(pod.metadata.name ?? '', sum)
  }
  return requests
}

function utilizationRatio(metrics: PodMetrics, requests: Map<string, number>, target: number): { ratio: number; utilization: number; rawAverage: number } {
  let used = 0
  let requested = 0
  let counted = 0
  for (const [name, metric] of metrics) {
    const request = requests.get(name)
    if (request === undefined) continue
    used += metric.value
    requested += request
    counted++
  }
  if (requested === 0) throw new Error('no metrics returned matched known pods')
  const utilization = Math.trunc((used * 100) / requested)
  return { ratio: utilization / target, utilization, rawAverage: Math.trunc(used / counted) }
}

function usageRatio(metrics: PodMetrics, target: number): { ratio: number; average: number } {
  let used = 0
  for (const metric of metrics.values()) used += metric.value
  const average = Math.trunc(used / metrics.size)
  return { ratio: average / target, average }
}

export interface ResourceProposal {
  replicas: number
  /** The average usage in milli-units. */
  rawAverage: number
  /** The average utilization in percent of the requests (Utilization targets only). */
  utilization?: number
}

/** The pods the calculation counts, with upstream's errors for none. */
function usablePods(pods: readonly KubeObject[]): readonly KubeObject[] {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count')
  return pods
}

/**
 * Replicas for an averageUtilization target (percent of the pods'
 * requests), as upstream's GetResourceReplicas after the metrics are read.
 */
export function utilizationReplicas(current: number, target: number, resource: string, pods: readonly KubeObject[], sampled: PodMetrics, now: number): ResourceProposal {
  const metrics = new Map(sampled)
  const groups = groupPods(usablePods(pods), metrics, resource, now)
  for (const name of [...groups.ignored, ...groups.unready]) metrics.delete(name)
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)')
  const requests = podRequests(pods, resource)
  const first = utilizationRatio(metrics, requests, target)
  const proposal = (replicas: number): ResourceProposal => ({ replicas, utilization: first.utilization, rawAverage: first.rawAverage })
  const scaleUpWithUnready = groups.unready.size > 0 && first.ratio > 1
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - first.ratio) <= TOLERANCE) return proposal(current)
    return proposal(Math.ceil(first.ratio * groups.readyCount))
  }
  if (groups.missing.size > 0) {
    // Missing samples count as the request (or the target, above 100 %) on the way down, as nothing on the way up.
    const fallback = Math.max(100, target)
    for (const name of groups.missing) metrics.set(name, { value: first.ratio < 1 ? Math.trunc(((requests.get(name) ?? 0) * fallback) / 100) : 0, timestamp: 0, windowMs: 0 })
  }
  if (scaleUpWithUnready) for (const name of groups.unready) metrics.set(name, { value: 0, timestamp: 0, windowMs: 0 })
  const second = utilizationRatio(metrics, requests, target).ratio
  return proposal(secondPass(current, first.ratio, second, metrics.size))
}

/** Replicas for an averageValue target (usage per pod), as upstream's calcPlainMetricReplicas. */
export function averageValueReplicas(current: number, target: number, resource: string, pods: readonly KubeObject[], sampled: PodMetrics, now: number): ResourceProposal {
  const metrics = new Map(sampled)
  const groups = groupPods(usablePods(pods), metrics, resource, now)
  for (const name of [...groups.ignored, ...groups.unready]) metrics.delete(name)
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)')
  const first = usageRatio(metrics, target)
  const proposal = (replicas: number): ResourceProposal => ({ replicas, rawAverage: first.average })
  const scaleUpWithUnready = groups.unready.size > 0 && first.ratio > 1
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - first.ratio) <= TOLERANCE) return proposal(current)
    return proposal(Math.ceil(first.ratio * groups.readyCount))
  }
  if (groups.missing.size > 0) for (const name of groups.missing) metrics.set(name, { value: first.ratio < 1 ? target : 0, timestamp: 0, windowMs: 0 })
  if (scaleUpWithUnready) for (const name of groups.unready) metrics.set(name, { value: 0, timestamp: 0, windowMs: 0 })
  return proposal(secondPass(current, first.ratio, usageRatio(metrics, target).ratio, metrics.size))
}

/** The count after the assumptions, unless it lands within tolerance or would turn the direction of the change. */
function secondPass(current: number, firstRatio: number, secondRatio: number, counted: number): number {
  if (Math.abs(1 - secondRatio) <= TOLERANCE || (firstRatio < 1 && secondRatio > 1) || (firstRatio > 1 && secondRatio < 1)) return current
  const replicas = Math.ceil(secondRatio * counted)
  if ((secondRatio < 1 && replicas > current) || (secondRatio > 1 && replicas < current)) return current
  return replicas
}
