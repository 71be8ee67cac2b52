/**
 * The pause before a Job replaces failed pods (upstream's backoffRecord in
 * pkg/controller/job/backoff_utils.go): 10 s after the latest failure,
 * doubling with each failure since the last success, at most 6 minutes.
 * Kept in memory per Job, as upstream keeps it, and measured on the
 * controller's clock.
 */
import type { KubeObject } from '../../machinery/object.js'

const BASE_MS = 10_000
const MAX_MS = 6 * 60_000

interface BackoffRecord {
  failuresSinceSuccess: number
  lastFailureAt: number
}

type Obj = Record<string, unknown>

/** When the pod finished: its containers' latest finishedAt, or `fallback` (upstream also falls back to the time it saw it). */
export function finishedAt(pod: KubeObject, fallback: number): number {
  const status = (pod['status'] as Obj | undefined) ?? {}
  const times = ((status['containerStatuses'] as Obj[] | undefined) ?? [])
    .map((c) => ((c['state'] as Obj | undefined)?.['terminated'] as Obj | undefined)?.['finishedAt'])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => Date.parse(t))
  return times.length ? Math.max(...times) : fallback
}

export class PodFailureBackoff {
  private readonly records = new Map<string, BackoffRecord>()

  /** Notes the pods newly counted: a success resets the count, failures add to it. */
  record(key: string, newlySucceeded: number, newFailures: number[]): void {
    if (!newlySucceeded && !newFailures.length) return
    const record = this.records.get(key) ?? { failuresSinceSuccess: 0, lastFailureAt: 0 }
    if (newlySucceeded) record.failuresSinceSuccess = 0
    for (const at of newFailures) {
      record.failuresSinceSuccess++
      record.lastFailureAt = Math.max(record.lastFailureAt, at)
    }
    this.records.set(key, record)
  }

  /** How long until new pods may start (0: now). */
  remainingMs(key: string, now: number): number {
    const record = this.records.get(key)
    if (!record || record.failuresSinceSuccess === 0) return 0
    const delay = Math.min(BASE_MS * 2 ** (record.failuresSinceSuccess - 1), MAX_MS)
    return Math.max(0, record.lastFailureAt + delay - now)
  }

  forget(key: string): void {
    this.records.delete(key)
  }
}
