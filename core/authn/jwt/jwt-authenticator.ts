/**
 * One JWT authenticator (an entry of AuthenticationConfiguration's `jwt`,
 * or the `--oidc-*` flags): it is given only tokens whose unverified `iss`
 * is its issuer (jwt-authenticators.ts picks it by that), so that several
 * issuers and the other token methods share one chain. The chain's token
 * cache (token-cache.ts) keeps what this answers for ten seconds, as
 * upstream's: a request with a known token costs one map lookup, not a
 * signature check and CEL, and groups from a distributed claim are fetched
 * again after it.
 */
import type { WebhookClient } from '../../crd/webhook-client.js'
import type { LoadedJWTAuthenticator } from '../../config/authentication.js'
import type { Logger } from '../../logging/logger.js'
import type { UserInfo } from '../../machinery/object.js'
import type { TokenAuthenticator } from '../bearer-token.js'
import { ClaimError, userFromClaims } from './claim-mapping.js'
import { expandDistributedClaim } from './distributed-claims.js'
import { IssuerKeys, type KeyFetchTimings } from './issuer-keys.js'
import { type Verified, verifyJwt } from './verify.js'

export interface JwtAuthenticatorOptions {
  client: WebhookClient
  logger: Logger
  now: () => Date
  /** `--oidc-signing-algs`. */
  algorithms: readonly string[]
  timings?: KeyFetchTimings
}

export interface JwtAuthenticator extends TokenAuthenticator {
  readonly issuer: string
  /** Settles after the first discovery attempt; the server never waits for an issuer to be up. */
  readonly started: Promise<void>
  stop(): void
}

export function jwtAuthenticator(config: LoadedJWTAuthenticator, options: JwtAuthenticatorOptions): JwtAuthenticator {
  const { issuer } = config
  // `egressSelectorType` (validated: controlplane or cluster) picks the proxy of the issuer's fetches; empty: direct, as upstream.
  const egress = issuer.egressSelectorType === 'controlplane' || issuer.egressSelectorType === 'cluster' ? issuer.egressSelectorType : undefined
  const keys = new IssuerKeys({
    issuerUrl: issuer.url,
    ...(issuer.discoveryURL ? { discoveryUrl: issuer.discoveryURL } : {}),
    ...(issuer.certificateAuthority ? { certificateAuthority: issuer.certificateAuthority } : {}),
    ...(egress ? { egress } : {}),
    client: options.client,
    logger: options.logger,
    ...(options.timings ? { timings: options.timings } : {}),
  })
  const verify = (token: string): Promise<Verified> =>
    verifyJwt(token, { issuer: issuer.url, audiences: issuer.audiences, algorithms: options.algorithms, keys, now: options.now })
  const groupsClaim = config.claimMappings.groups.claim

  async function authenticate(token: string): Promise<{ user: UserInfo } | { error: string }> {
    const verified = await verify(token)
    if ('error' in verified) return { error: `oidc: verify token: ${verified.error}` }
    const claims = { ...verified.claims }
    if (groupsClaim) {
      try {
        await expandDistributedClaim(
          {
            claim: groupsClaim,
            issuer: issuer.url,
            client: options.client,
            verify,
            ...(issuer.certificateAuthority ? { certificateAuthority: issuer.certificateAuthority } : {}),
            ...(egress ? { egress } : {}),
          },
          claims,
        )
      } catch (err) {
        return { error: `oidc: could not expand distributed claims: ${(err as Error).message}` }
      }
    }
    try {
      return { user: userFromClaims(config, claims) }
    } catch (err) {
      if (err instanceof ClaimError) return { error: err.message }
      throw err
    }
  }

  return {
    issuer: issuer.url,
    started: keys.start(),
    stop: () => keys.stop(),
    async authenticateToken(token) {
      const result = await authenticate(token)
      if ('error' in result) {
        options.logger.info({ issuer: issuer.url, reason: result.error }, 'a JWT was refused')
        return result
      }
      return { user: result.user }
    },
  }
}
