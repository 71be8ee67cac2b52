/**
 * Service-account tokens as one part of the security chain: the keys are
 * loaded once at start (a server given none makes its signing key on first use); then the two token
 * authenticators (legacy secret-based tokens first, then bound tokens, in
 * upstream's order), the TokenRequest issuer and the discovery documents
 * all use them.
 */
import type { ServiceAccountTokenOptions } from '../authentication-options.js'
import type { Part, SecurityContext } from '../../security/context.js'
import type { TokenAuthenticator } from '../bearer-token.js'
import { EXTENDED_EXPIRATION_SECONDS, type TokenClaims } from './claims.js'
import { startExternalSigning } from './external-signer.js'
import { discoveryProblem, issuerDiscovery, type IssuerDiscovery } from './issuer-discovery.js'
import { jwtTokenAuthenticator, signToken } from './jwt.js'
import { staticKeySet, type PublicKeySet } from './key-set.js'
import { generateSigningKeyPem, loadSigningKey, loadVerificationKeys } from './keys.js'
import type { TokenIssuerConfig } from './token-request.js'
import { boundTokenValidator, LAST_USED_LABEL, LEGACY_ISSUER, type LegacyTokenUse, legacyTokenValidator, storedTokenObjects } from './validators.js'
import { INVALID_LEGACY_AUTO_TOKEN_USES, LEGACY_AUTO_TOKEN_USES, LEGACY_MANUAL_TOKEN_USES, LEGACY_TOKEN_COUNTERS, LEGACY_TOKENS } from './metrics.js'

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local'

export interface ServiceAccountTokens {
  /** Legacy then bound tokens: two members of the token chain. */
  readonly authenticators: TokenAuthenticator[]
  /** What TokenRequest signs with, once the keys are loaded. */
  issuerConfig(): Promise<TokenIssuerConfig>
  /** The discovery documents, once loaded; undefined when the first issuer is not an https URL. */
  discovery(): Promise<IssuerDiscovery | undefined>
}

interface Loaded {
  sign(claims: TokenClaims): Promise<string>
  keys: PublicKeySet
  maxExpirationSeconds: number
  extendedExpirationSeconds: number
  stop?(): void
}

/** The issuers in effect: the configured ones, else the default. */
export function issuersOf(options: ServiceAccountTokenOptions): string[] {
  return options.issuers?.length ? [...options.issuers] : [DEFAULT_ISSUER]
}

/** `--api-audiences`, else the issuers (upstream's default). */
export function apiAudiencesOf(ctx: SecurityContext): string[] {
  const auth = ctx.options.authentication ?? {}
  if (auth.apiAudiences?.length) return [...auth.apiAudiences]
  return auth.serviceAccounts === false ? [] : issuersOf(auth.serviceAccounts ?? {})
}

async function loadKeys(ctx: SecurityContext, options: ServiceAccountTokenOptions): Promise<Loaded> {
  const maxExpirationSeconds = options.maxExpirationSeconds ?? 0
  if (options.externalSigner) {
    // The signer holds every key: it signs, and its FetchKeys answer is all that verifies.
    const external = await startExternalSigning(options.externalSigner, { maxExpirationSeconds, logger: ctx.logger, now: () => ctx.now().getTime() })
    return {
      sign: external.sign,
      keys: external.keys,
      maxExpirationSeconds: external.maxExpirationSeconds,
      extendedExpirationSeconds: external.extendedExpirationSeconds,
      stop: () => external.keys.stop(),
    }
  }
  const signingPem = options.signingKey ?? (await generateSigningKeyPem())
  const signingKey = await loadSigningKey(signingPem)
  const keys = options.keys?.length ? await loadVerificationKeys(options.keys) : [signingKey.publicKey]
  return {
    sign: (claims) => signToken(signingKey, claims),
    keys: staticKeySet(keys),
    maxExpirationSeconds,
    extendedExpirationSeconds: EXTENDED_EXPIRATION_SECONDS,
  }
}

const USE_COUNTERS = { auto: LEGACY_AUTO_TOKEN_USES, manual: LEGACY_MANUAL_TOKEN_USES, invalidated: INVALID_LEGACY_AUTO_TOKEN_USES }
const SECRETS = { group: '', version: 'v1', resource: 'secrets', namespaced: true }

/**
 * Where the use of a legacy token is tracked: the counters, and the
 * Secret's last-used label, patched through the server's own API as
 * kube-apiserver (upstream's loopback client) with the Secret's uid, so
 * that a Secret made again under the name is not labelled for the old one.
 */
function legacyTokenUse(ctx: SecurityContext): LegacyTokenUse {
  return {
    now: ctx.now,
    count: (kind) => ctx.metrics?.inc(USE_COUNTERS[kind], {}),
    async labelLastUsed(secret, day) {
      const { name = '', namespace = '', uid } = secret.metadata
      try {
        await ctx.client.patch(SECRETS, namespace, name, 'merge', { metadata: { uid, labels: { [LAST_USED_LABEL]: day } } })
      } catch (err) {
        ctx.logger.error({ secret: `${namespace}/${name}`, err: String(err) }, 'cannot label a legacy service account token with the day it was last used')
      }
    },
  }
}

/**
 * `externalAddress` is where clients reach the server (host and port), for
 * the default key set URI; asked at each discovery request.
 */
export function serviceAccountTokens(
  ctx: SecurityContext,
  externalAddress: () => string,
): Part<ServiceAccountTokens> | undefined {
  const configured = ctx.options.authentication?.serviceAccounts
  if (configured === false) return undefined
  const options = configured ?? {}
  const issuers = issuersOf(options)
  const apiAudiences = apiAudiencesOf(ctx)
  // Given keys (or a signer) load at once, so that `ready` reports a bad one. A server given none makes its
  // own signing key on first use instead: a start that never meets a service account token skips the key generation.
  const generatesItsKey = !options.externalSigner && options.signingKey === undefined && !options.keys?.length
  let loading: Promise<Loaded> | undefined
  const keysLoaded = (): Promise<Loaded> => {
    if (loading) return loading
    loading = loadKeys(ctx, options)
    // A failure is reported by `ready`; the members below must not add unhandled rejections of their own.
    loading.catch(() => {})
    return loading
  }
  if (!generatesItsKey) keysLoaded()
  const objects = storedTokenObjects(ctx.catalogue, ctx.stored)

  const whenLoaded = (build: (l: Loaded) => TokenAuthenticator): TokenAuthenticator => {
    let built: Promise<TokenAuthenticator> | undefined
    return {
      async authenticateToken(token, audiences, notes) {
        built ??= keysLoaded().then(build)
        return (await built).authenticateToken(token, audiences, notes)
      },
    }
  }
  const { metrics } = ctx
  // Shown from the start, at zero, as upstream registers them.
  for (const counter of LEGACY_TOKEN_COUNTERS) metrics?.inc(counter, {}, 0)
  const countLegacyToken = () => metrics?.inc(LEGACY_TOKENS, {})
  const legacy = whenLoaded(({ keys }) =>
    jwtTokenAuthenticator({
      issuers: [LEGACY_ISSUER],
      keys,
      implicitAudiences: apiAudiences,
      validate: legacyTokenValidator(objects, options.lookup ?? true, legacyTokenUse(ctx)),
      countLegacyToken,
    }),
  )
  const bound = whenLoaded(({ keys }) =>
    jwtTokenAuthenticator({ issuers, keys, implicitAudiences: apiAudiences, validate: boundTokenValidator(objects, ctx.now), countLegacyToken }),
  )

  const issuer = issuers[0] ?? DEFAULT_ISSUER
  const problem = discoveryProblem(issuer)
  if (problem) ctx.logger.info({ issuer }, `service account issuer discovery is not served: ${problem}`)
  const jwksUri = (): string => options.jwksUri || `https://${externalAddress()}/openid/v1/jwks`
  let discovery: Promise<IssuerDiscovery> | undefined

  return {
    value: {
      authenticators: [legacy, bound],
      issuerConfig: async () => {
        const { sign, maxExpirationSeconds, extendedExpirationSeconds } = await keysLoaded()
        return { issuer, sign, apiAudiences, maxExpirationSeconds, extendExpiration: options.extendExpiration ?? true, extendedExpirationSeconds }
      },
      discovery: async () => {
        if (problem) return undefined
        discovery ??= keysLoaded().then(({ keys }) => issuerDiscovery(issuer, keys, jwksUri))
        return discovery
      },
    },
    ready: generatesItsKey ? Promise.resolve() : keysLoaded().then(() => {}),
    stop: () => {
      void loading?.then((l) => l.stop?.(), () => {})
    },
  }
}
