/**
 * One JWT authenticator (an entry of AuthenticationConfiguration's `jwt`,
 * or the `--oidc-*` flags): it is given only tokens whose unverified `iss`
 * is its issuer (jwt-authenticators.ts picks it by that), so that several
 * issuers and the other token methods share one chain. A verified token's user is cached for ten seconds (less when
 * the token expires first), as upstream's token cache keeps a success: a
 * request with a known token costs one map lookup, not a signature check
 * and CEL, and groups from a distributed claim are fetched again after it.
 */
import type { WebhookClient } from '../../crd/webhook-client.js'
import type { LoadedJWTAuthenticator } from '../../config/authentication.js'
import type { Logger } from '../../logging/logger.js'
import type { UserInfo } from '../../machinery/object.js'
import type { TokenAuthenticator } from '../bearer-token.js'
import { secretDigest } from '../constant-time.js'
import { ClaimError, userFromClaims } from './claim-mapping.js'
import { expandDistributedClaim } from './distributed-claims.js'
import { IssuerKeys, type KeyFetchTimings } from './issuer-keys.js'
import { type Verified, verifyJwt } from './verify.js'

/** How long a verified token's user is kept: upstream's token success cache TTL. */
const SUCCESS_CACHE_TTL_MS = 10_000

/** Tokens kept verified at once; past it the oldest are forgotten (and verified again when seen). */
const MAX_CACHED_TOKENS = 10_000

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

/**
 * Verified tokens until their entry expires, oldest forgotten first; filed by
 * their digest, so that no lookup compares a caller's token with a cached one.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { user: UserInfo; expiresAt: number }>()

  get(digest: string, now: number): UserInfo | undefined {
    const entry = this.entries.get(digest)
    if (!entry) return undefined
    if (entry.expiresAt > now) return entry.user
    this.entries.delete(digest)
    return undefined
  }

  set(digest: string, user: UserInfo, expiresAt: number): void {
    if (this.entries.size >= MAX_CACHED_TOKENS) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(digest, { user, expiresAt })
  }
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
  const cache = new VerifiedTokens()

  async function authenticate(token: string): Promise<{ user: UserInfo; expiresAt: number } | { error: string }> {
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
      return { user: userFromClaims(config, claims), expiresAt: verified.expiresAt }
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
      const digest = secretDigest(token)
      const cached = cache.get(digest, options.now().getTime())
      if (cached) return { user: cached }
      const result = await authenticate(token)
      if ('error' in result) {
        options.logger.info({ issuer: issuer.url, reason: result.error }, 'a JWT was refused')
        return result
      }
      cache.set(digest, result.user, Math.min(result.expiresAt, options.now().getTime() + SUCCESS_CACHE_TTL_MS))
      return { user: result.user }
    },
  }
}
