/**
 * The authentication chain, in upstream's order: request header (front
 * proxy), client certificate, bearer token, anonymous. The bearer-token
 * member asks one token chain (static tokens, bootstrap tokens,
 * service-account tokens, OIDC/JWT, the token webhook, in that order), and
 * TokenReview asks the same one, so the two never disagree.
 */
import { lifeCycleOf, type Part, type SecurityContext } from '../security/context.js'
import { type Authenticator, type RequestAuthenticator, UnionAuthenticator } from './authenticator.js'
import { bearerTokenAuthenticator, staticTokenAuthenticator, type TokenAuthenticator, tokenChain } from './bearer-token.js'
import type { LoadedJWTAuthenticator } from '../config/authentication.js'
import { type JwtAuthenticators, jwtAuthenticators } from './jwt/jwt-authenticators.js'
import { tokenWebhookAuthenticator } from './token-webhook.js'
import { x509Authenticator } from './x509.js'

export interface Authentication {
  /** Who sent a request: the user, or why it is a 401. */
  readonly request: RequestAuthenticator
  /** Who a bearer token stands for, for requests and TokenReview alike. */
  readonly tokens: TokenAuthenticator
  readonly ready: Promise<void>
  stop(): void
  /**
   * Replaces the JWT authenticators (a reloaded `--authentication-config`).
   * Undefined when the server was started without a JWT list to replace.
   */
  replaceJwtAuthenticators(configs: readonly LoadedJWTAuthenticator[]): Promise<void> | undefined
}

/** The JWT slot, present when a list was given (even empty, so that a reload can fill it). */
function jwtPart(ctx: SecurityContext): JwtAuthenticators | undefined {
  const auth = ctx.options.authentication ?? {}
  if (!auth.jwt) return undefined
  return jwtAuthenticators(auth.jwt, {
    client: ctx.webhookClient,
    logger: ctx.logger,
    now: ctx.now,
    algorithms: auth.jwtSigningAlgorithms ?? ['RS256'],
    ...(auth.jwtKeyFetch ? { timings: auth.jwtKeyFetch } : {}),
  })
}

/** The token authenticators in upstream's order; a method not configured adds nothing. */
function tokenAuthenticators(ctx: SecurityContext, jwt: JwtAuthenticators | undefined): Part<TokenAuthenticator>[] {
  const auth = ctx.options.authentication ?? {}
  const parts: Part<TokenAuthenticator>[] = []
  if (auth.tokens?.length) parts.push({ value: staticTokenAuthenticator(auth.tokens) }) // --token-auth-file
  // bootstrap tokens, service-account tokens: here, in this order, each when configured
  if (jwt) parts.push(jwt) // --oidc-* or --authentication-config
  if (auth.tokenWebhook) parts.push({ value: tokenWebhookAuthenticator(auth.tokenWebhook, ctx.webhookClient, ctx.logger, ctx.now) })
  return parts
}

/** The request authenticators in upstream's order, the bearer one asking `tokens`. */
function requestAuthenticators(ctx: SecurityContext, tokens: TokenAuthenticator, anyTokens: boolean): Part<Authenticator>[] {
  const auth = ctx.options.authentication ?? {}
  const parts: Part<Authenticator>[] = []
  // request header (front proxy): first, when configured
  if (auth.clientCertificates ?? true) parts.push({ value: x509Authenticator })
  if (anyTokens) parts.push({ value: bearerTokenAuthenticator(tokens) })
  return parts
}

/**
 * Whether requests with no credential run as `system:anonymous`. As
 * upstream, never while everything is allowed to everyone authenticated.
 */
function anonymousAllowed(ctx: SecurityContext): boolean {
  const wanted = ctx.options.authentication?.anonymous ?? true
  const alwaysAllow = (ctx.options.authorizationModes ?? ['AlwaysAllow']).includes('AlwaysAllow')
  if (wanted && alwaysAllow)
    ctx.logger.warn({}, 'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false.')
  return wanted && !alwaysAllow
}

export function buildAuthentication(ctx: SecurityContext): Authentication {
  const jwt = jwtPart(ctx)
  const tokenParts = tokenAuthenticators(ctx, jwt)
  const tokens = tokenChain(tokenParts.map((p) => p.value))
  const requestParts = requestAuthenticators(ctx, tokens, tokenParts.length > 0)
  const request = new UnionAuthenticator(
    requestParts.map((p) => p.value),
    anonymousAllowed(ctx),
  )
  return {
    request,
    tokens,
    ...lifeCycleOf([...tokenParts, ...requestParts]),
    replaceJwtAuthenticators: (configs) => jwt?.replace(configs),
  }
}
