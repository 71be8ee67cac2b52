/**
 * The `--coordinated-leadership-*` timings, checked as client-go's leader
 * elector checks its own: a leader must give up (renew deadline) before its
 * lease can pass to another (lease duration), and retry more than once
 * within the deadline, with the jitter of 1.2 upstream adds.
 */
import { featureEnabled } from '../features.js'
import { parseBool } from '../values.js'
import type { Rule } from './rule.js'

const JITTER = 1.2

const timings: Rule = ({ values }) => {
  const lease = values['coordinated-leadership-lease-duration']
  const deadline = values['coordinated-leadership-renew-deadline']
  const retry = values['coordinated-leadership-retry-period']
  const problems: string[] = []
  for (const [flag, value] of [
    ['lease-duration', lease],
    ['renew-deadline', deadline],
    ['retry-period', retry],
  ] as const)
    if (value <= 0) problems.push(`--coordinated-leadership-${flag} must be greater than zero`)
  if (problems.length) return problems
  if (lease <= deadline) problems.push('--coordinated-leadership-lease-duration must be greater than --coordinated-leadership-renew-deadline')
  if (deadline <= JITTER * retry)
    problems.push(`--coordinated-leadership-renew-deadline must be greater than ${JITTER} times --coordinated-leadership-retry-period`)
  return problems
}

/** Whether `--runtime-config` serves LeaseCandidate (alpha: off unless a key turns it on; the most specific key wins). */
function leaseCandidatesServed(config: Readonly<Record<string, string>>): boolean {
  for (const key of ['coordination.k8s.io/v1alpha2/leasecandidates', 'coordination.k8s.io/v1alpha2', 'api/alpha', 'api/all']) {
    const value = config[key]
    if (value === undefined) continue
    if (value === '') return true
    const parsed = parseBool(value)
    return 'value' in parsed && parsed.value
  }
  return false
}

/** As upstream: coordinated leader election needs its LeaseCandidate API served. */
const coordinatedNeedsCandidates: Rule = ({ values }) =>
  featureEnabled(values, 'CoordinatedLeaderElection') && !leaseCandidatesServed(values['runtime-config'])
    ? ['CoordinatedLeaderElection feature requires coordination.k8s.io/v1alpha2 API to be enabled']
    : []

export const LEADER_ELECTION_RULES: readonly Rule[] = [timings, coordinatedNeedsCandidates]
