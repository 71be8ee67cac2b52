/**
 * Anonymous requests (`--anonymous-auth`, or the `anonymous` section of
 * AuthenticationConfiguration): a request with no credential runs as
 * `system:anonymous` in `system:unauthenticated`; with conditions, only on
 * those exact paths (upstream compares the URL path as it is, no prefixes).
 */
import type { Authenticator } from './authenticator.js'
import { ANONYMOUS_USER, UNAUTHENTICATED_GROUP } from './authenticator.js'

/** `paths` empty: every path. */
export function anonymousAuthenticator(paths: readonly string[]): Authenticator {
  const allowed = new Set(paths)
  return {
    authenticate(request) {
      if (allowed.size > 0 && !allowed.has(new URL(request.url).pathname)) return undefined
      return { user: { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } }
    },
  }
}
