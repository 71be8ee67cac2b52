/**
 * Authentication and authorization as upstream's filters and authorizer
 * chain count them: `authentication_attempts` and
 * `authentication_duration_seconds` by result, `authenticated_user_requests`
 * by a coarse username, `authorization_attempts_total`
 * and `authorization_duration_seconds` by result, and
 * `apiserver_authorization_decisions_total` for each configured authorizer's
 * final (allow or deny) decisions.
 */
import type { RequestAuthenticator } from '../authn/authenticator.js'
import type { Authorizer } from '../authz/authorizer.js'
import {
  AUTHENTICATED_USER_REQUESTS,
  AUTHENTICATION_ATTEMPTS,
  AUTHENTICATION_DURATION,
  AUTHORIZATION_ATTEMPTS,
  AUTHORIZATION_DECISIONS,
  AUTHORIZATION_DURATION,
} from './definitions.js'
import type { Metrics } from './metrics.js'

const clock = (): number => performance.now()

/** Identities upstream's username label keeps as they are; any other name is `email_id` (it has an @) or `other`. */
const KNOWN_USERNAMES = new Set(['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default'])

/** The `username` label of `authenticated_user_requests`: a few categories, never a real user's name. */
export function usernameCategory(username: string): string {
  if (KNOWN_USERNAMES.has(username)) return username
  return username.includes('@') ? 'email_id' : 'other'
}

/**
 * Upstream's results: `success`; `failure` when no authenticator found a
 * credential (and anonymous requests are off or declined); `error` when a
 * credential was refused (a wrong token, a certificate or audience that
 * does not match) or an authenticator failed.
 */
export function measuredAuthenticator(inner: RequestAuthenticator, metrics: Metrics): RequestAuthenticator {
  return {
    async authenticate(request, connection) {
      const started = clock()
      let result: 'success' | 'failure' | 'error' = 'error'
      try {
        const answer = await inner.authenticate(request, connection)
        if ('user' in answer) {
          result = 'success'
          metrics.inc(AUTHENTICATED_USER_REQUESTS, { username: usernameCategory(answer.user.username) })
        } else if (answer.noCredential) {
          result = 'failure'
        }
        return answer
      } finally {
        metrics.inc(AUTHENTICATION_ATTEMPTS, { result })
        metrics.record(AUTHENTICATION_DURATION, { result }, (clock() - started) / 1000)
      }
    },
  }
}

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
