/**
 * The JWT slot of the token chain: the authenticators of the `--oidc-*`
 * flags or of `--authentication-config`'s `jwt` list, tried in list order.
 * A reload of the file swaps the whole list at once (upstream's
 * updateAuthenticationConfig) when the new issuers were tried: requests in
 * flight finish with the old list, the old issuers' background fetches stop.
 */
import type { LoadedJWTAuthenticator } from '../../config/authentication.js'
import type { Part } from '../../security/context.js'
import type { TokenAuthenticator } from '../bearer-token.js'
import { type JwtAuthenticator, jwtAuthenticator, type JwtAuthenticatorOptions } from './jwt-authenticator.js'
import { untrustedIssuer } from './verify.js'

export interface JwtAuthenticators extends Part<TokenAuthenticator> {
  /**
   * Replaces every JWT authenticator with those of `configs`, once their
   * issuers had a first discovery attempt, so that tokens keep passing
   * through the old list meanwhile.
   */
  replace(configs: readonly LoadedJWTAuthenticator[]): Promise<void>
}

/** How long start-up waits for the issuers' first discovery attempt. */
const FIRST_ATTEMPT_WAIT_MS = 5_000

/**
 * Settles when every issuer had its first discovery attempt, or after a few
 * seconds: an issuer that is down or slow never holds the server back.
 */
function firstAttempts(list: readonly JwtAuthenticator[]): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FIRST_ATTEMPT_WAIT_MS)
  })
  return Promise.race([Promise.all(list.map((a) => a.started)), waited]).then(() => clearTimeout(timer))
}

export function jwtAuthenticators(configs: readonly LoadedJWTAuthenticator[], options: JwtAuthenticatorOptions): JwtAuthenticators {
  const build = (list: readonly LoadedJWTAuthenticator[]): JwtAuthenticator[] => list.map((c) => jwtAuthenticator(c, options))
  let current = build(configs)
  return {
    value: {
      async authenticateToken(token) {
        // Issuer URLs are unique: the issuer the token claims names its one authenticator. Read once here,
        // not by each authenticator in turn (a megabyte token and sixty-four issuers held the thread seconds).
        const iss = untrustedIssuer(token)
        if (iss === undefined) return undefined
        return current.find((a) => a.issuer === iss)?.authenticateToken(token)
      },
    },
    ready: firstAttempts(current),
    stop() {
      for (const a of current) a.stop()
    },
    async replace(list) {
      const next = build(list)
      await firstAttempts(next)
      const old = current
      current = next
      for (const a of old) a.stop()
    },
  }
}
