/**
 * What the replica controllers read off a pod (upstream's podutil and
 * controller_utils): active, ready, available after minReadySeconds, and
 * the order in which surplus pods go.
 */
import type { KubeObject } from '../../machinery/object.js'

interface Condition {
  type?: string
  status?: string
  lastTransitionTime?: string
}

const statusOf = (pod: KubeObject): Record<string, unknown> => (pod['status'] as Record<string, unknown> | undefined) ?? {}
const phaseOf = (pod: KubeObject): string => String(statusOf(pod)['phase'] ?? '')
const readyConditionOf = (pod: KubeObject): Condition | undefined =>
  ((statusOf(pod)['conditions'] as Condition[] | undefined) ?? []).find((c) => c.type === 'Ready')

/** Neither finished nor being deleted: the pods that count as replicas. */
export function isActivePod(pod: KubeObject): boolean {
  const phase = phaseOf(pod)
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp
}

export function isPodReady(pod: KubeObject): boolean {
  return readyConditionOf(pod)?.status === 'True'
}

/** Ready for at least `minReadySeconds` (upstream's IsPodAvailable). */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, now: Date): boolean {
  const ready = readyConditionOf(pod)
  if (ready?.status !== 'True') return false
  if (minReadySeconds <= 0) return true
  const since = Date.parse(ready.lastTransitionTime ?? '')
  return Number.isFinite(since) && since + minReadySeconds * 1000 < now.getTime()
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 }

function restarts(pod: KubeObject): number {
  const statuses = (statusOf(pod)['containerStatuses'] as Array<{ restartCount?: number }> | undefined) ?? []
  return statuses.reduce((max, s) => Math.max(max, s.restartCount ?? 0), 0)
}

/**
 * Orders pods so the ones to delete first come first (upstream's
 * ActivePodsWithRanks without the co-location rank): unscheduled before
 * scheduled, pending before unknown before running, not ready before ready,
 * ready for less time first, more restarts first, newer first.
 */
export function deletionOrder(a: KubeObject, b: KubeObject): number {
  const scheduled = (p: KubeObject): number => (String((p['spec'] as Record<string, unknown> | undefined)?.['nodeName'] ?? '') ? 1 : 0)
  if (scheduled(a) !== scheduled(b)) return scheduled(a) - scheduled(b)
  const phase = (p: KubeObject): number => PHASE_RANK[phaseOf(p)] ?? 0
  if (phase(a) !== phase(b)) return phase(a) - phase(b)
  const ready = (p: KubeObject): number => (isPodReady(p) ? 1 : 0)
  if (ready(a) !== ready(b)) return ready(a) - ready(b)
  if (isPodReady(a) && isPodReady(b)) {
    const since = (p: KubeObject): number => Date.parse(readyConditionOf(p)?.lastTransitionTime ?? '') || 0
    if (since(a) !== since(b)) return since(b) - since(a)
  }
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a)
  const created = (p: KubeObject): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0
  return created(b) - created(a)
}
