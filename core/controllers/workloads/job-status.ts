/**
 * The parts of a Job's status its controller decides from the pods: the
 * conditions (upstream writes SuccessCriteriaMet or FailureTarget first,
 * then Complete or Failed once no pod runs any more) and the wording of
 * their reasons, as upstream's job controller words them.
 */
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { type Condition, conditionsOf } from './object-keys.js'

export interface JobCounts {
  active: number
  ready: number
  terminating: number
  succeeded: number
  failed: number
}

export interface Verdict {
  /** SuccessCriteriaMet or FailureTarget. */
  interim: 'SuccessCriteriaMet' | 'FailureTarget'
  /** What the Job becomes once its pods are gone. */
  terminal: 'Complete' | 'Failed'
  reason: string
  message: string
}

export const SUCCESS: Verdict = { interim: 'SuccessCriteriaMet', terminal: 'Complete', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }
export const BACKOFF_LIMIT_EXCEEDED: Verdict = { interim: 'FailureTarget', terminal: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
export const DEADLINE_EXCEEDED: Verdict = { interim: 'FailureTarget', terminal: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }

/** The verdict a Job already carries (its interim condition is True), if any. */
export function recordedVerdict(job: KubeObject): Verdict | undefined {
  for (const c of conditionsOf(job['status'])) {
    if (c.status !== 'True') continue
    if (c.type === 'SuccessCriteriaMet') return { ...SUCCESS, reason: c.reason ?? SUCCESS.reason, message: c.message ?? SUCCESS.message }
    if (c.type === 'FailureTarget') return { ...BACKOFF_LIMIT_EXCEEDED, reason: c.reason ?? '', message: c.message ?? '' }
  }
  return undefined
}

/**
 * Sets the condition of `type` (upstream's updateConditions): a condition
 * whose status, reason and message are unchanged is left as it is; one that
 * changes gets new probe and transition times.
 */
export function setCondition(status: Record<string, unknown>, type: string, value: Condition['status'], reason: string, message: string, now: Date): boolean {
  const conditions = conditionsOf(status)
  const existing = conditions.find((c) => c.type === type)
  if (existing && existing.status === value && existing.reason === reason && existing.message === message) return false
  const at = formatTimestamp(now)
  const condition: Condition = { type, status: value, lastProbeTime: at, lastTransitionTime: existing?.status === value ? (existing.lastTransitionTime ?? at) : at, reason, message }
  status['conditions'] = existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition]
  return true
}
