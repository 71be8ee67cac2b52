/**
 * Authorization as upstream's filter and authorizer chain count it:
 * `authorization_attempts_total` and `authorization_duration_seconds` by
 * result, and `apiserver_authorization_decisions_total` for each configured
 * authorizer's final (allow or deny) decisions.
 */
import { AUTHORIZATION_ATTEMPTS, AUTHORIZATION_DECISIONS, AUTHORIZATION_DURATION } from '../metrics/definitions.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Authorizer } from './authorizer.js'

const clock = (): number => performance.now()

const RESULTS = { allow: 'allowed', deny: 'denied', 'no-opinion': 'no-opinion' } as const

/** The whole chain as the authorization filter asks it: `allowed`, `denied`, `no-opinion`, or `error`. */
export function measuredAuthorizer(inner: Authorizer, metrics: Metrics): Authorizer {
  return {
    async authorize(attrs) {
      const started = clock()
      let result = 'error'
      try {
        const decision = await inner.authorize(attrs)
        result = RESULTS[decision.decision]
        return decision
      } finally {
        metrics.inc(AUTHORIZATION_ATTEMPTS, { result })
        metrics.record(AUTHORIZATION_DURATION, { result }, (clock() - started) / 1000)
      }
    },
  }
}

/** One configured authorizer, its final decisions counted under its type and name. */
export function decisionCountingAuthorizer(inner: Authorizer, metrics: Metrics, type: string, name: string): Authorizer {
  const allowed = metrics.counter(AUTHORIZATION_DECISIONS.name, AUTHORIZATION_DECISIONS.help, { type, name, decision: 'allowed' })
  const denied = metrics.counter(AUTHORIZATION_DECISIONS.name, AUTHORIZATION_DECISIONS.help, { type, name, decision: 'denied' })
  const counted: Authorizer = {
    async authorize(attrs) {
      const decision = await inner.authorize(attrs)
      if (decision.decision === 'allow') allowed.add()
      else if (decision.decision === 'deny') denied.add()
      return decision
    },
  }
  // SelfSubjectRulesReview still reads the rules behind the decisions.
  if (inner.rulesFor) counted.rulesFor = inner.rulesFor.bind(inner)
  return counted
}
