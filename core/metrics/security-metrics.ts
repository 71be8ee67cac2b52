/**
 * Authentication as upstream's filter counts it: `authentication_attempts`
 * and `authentication_duration_seconds` by result, and
 * `authenticated_user_requests` by a coarse username. Authorization's
 * counts are authz/measured-authorizer.ts's.
 */
import type { RequestAuthenticator } from '../authn/authenticator.js'
import { AUTHENTICATED_USER_REQUESTS, AUTHENTICATION_ATTEMPTS, AUTHENTICATION_DURATION } from './definitions.js'
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
    async authenticate(request, connection, notes) {
      const started = clock()
      let result: 'success' | 'failure' | 'error' = 'error'
      try {
        const answer = await inner.authenticate(request, connection, notes)
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
