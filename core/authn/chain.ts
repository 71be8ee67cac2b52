/**
 * The authentication chain, in upstream's order: request header (front
 * proxy), client certificate, bearer token, a bearer token in a WebSocket
 * subprotocol, anonymous. The bearer-token
 * member asks one token chain (static tokens, bootstrap tokens,
 * service-account tokens, OIDC/JWT, the token webhook, in that order)
 * through upstream's token cache, and TokenReview asks the same one, so the
 * two never disagree.
 */
import { lifeCycleOf, type Part, type SecurityContext } from '../security/context.js'
import { anonymousAuthenticator } from './anonymous.js'
import { type Authenticator, type RequestAuthenticator, UnionAuthenticator } from './authenticator.js'
import { audienceAgnostic, bearerTokenAuthenticator, staticTokenAuthenticator, type TokenAuthenticator, tokenChain } from './bearer-token.js'
import { bootstrapTokenAuthenticator } from './bootstrap-token.js'
import { apiAudiencesOf, type ServiceAccountTokens, serviceAccountTokens } from './serviceaccount/service-account-tokens.js'
import { requestHeaderAuthenticator } from './request-header.js'
import type { LoadedJWTAuthenticator } from '../config/authentication.js'
import { type JwtAuthenticators, jwtAuthenticators } from './jwt/jwt-authenticators.js'
import { cachedTokenAuthenticator } from './token-cache.js'
import { tokenWebhookAuthenticator } from './token-webhook.js'
import { websocketProtocolAuthenticator } from './websocket-protocol.js'
import { x509Authenticator } from './x509.js'

export interface Authentication {
  /** Who sent a request: the user, or why it is a 401. */
  readonly request: RequestAuthenticator
  /** Who a bearer token stands for, for requests and TokenReview alike. */
  readonly tokens: TokenAuthenticator
  /** `--api-audiences` in effect: what a token is asked to be meant for when nothing else is asked. */
  readonly apiAudiences: readonly string[]
  /** Service-account tokens (TokenRequest, discovery), unless turned off. */
  readonly serviceAccountTokens: ServiceAccountTokens | undefined
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
function tokenAuthenticators(
  ctx: SecurityContext,
  serviceAccounts: Part<ServiceAccountTokens> | undefined,
  jwt: JwtAuthenticators | undefined,
): Part<TokenAuthenticator>[] {
  const auth = ctx.options.authentication ?? {}
  const apiAudiences = apiAudiencesOf(ctx)
  const parts: Part<TokenAuthenticator>[] = []
  if (auth.tokens?.length) parts.push({ value: audienceAgnostic(apiAudiences, staticTokenAuthenticator(auth.tokens)) }) // --token-auth-file
  if (auth.bootstrapTokens) parts.push({ value: audienceAgnostic(apiAudiences, bootstrapTokenAuthenticator(ctx.catalogue, ctx.stored, ctx.now, ctx.logger)) })
  if (serviceAccounts) {
    // Legacy then bound tokens; the first carries the loading of their keys (and the stop of an external signer's refresh).
    const [legacy, bound] = serviceAccounts.value.authenticators
    if (legacy)
      parts.push({
        value: legacy,
        ...(serviceAccounts.ready ? { ready: serviceAccounts.ready } : {}),
        ...(serviceAccounts.stop ? { stop: serviceAccounts.stop } : {}),
      })
    if (bound) parts.push({ value: bound })
  }
  // JWTs and the webhook are asked for the API's audiences too, as upstream wraps every token authenticator.
  if (jwt) parts.push({ ...jwt, value: audienceAgnostic(apiAudiences, jwt.value) }) // --oidc-* or --authentication-config
  if (auth.tokenWebhook) parts.push({ value: tokenWebhookAuthenticator(auth.tokenWebhook, apiAudiences, ctx.webhookClient, ctx.logger, ctx.now) })
  return parts
}

/** The request authenticators in upstream's order, the bearer one asking `tokens`. */
function requestAuthenticators(ctx: SecurityContext, tokens: TokenAuthenticator, anyTokens: boolean): Part<Authenticator>[] {
  const auth = ctx.options.authentication ?? {}
  const parts: Part<Authenticator>[] = []
  if (auth.requestHeader?.usernameHeaders.length) parts.push({ value: requestHeaderAuthenticator(auth.requestHeader) }) // --requestheader-*
  if (auth.clientCertificates ?? true) parts.push({ value: x509Authenticator })
  if (anyTokens) {
    parts.push({ value: bearerTokenAuthenticator(tokens, apiAudiencesOf(ctx)) })
    parts.push({ value: websocketProtocolAuthenticator(tokens, apiAudiencesOf(ctx)) })
  }
  return parts
}

/**
 * Who requests with no credential are: `system:anonymous` when allowed (on
 * every path, or on the configured ones). As upstream, `--anonymous-auth` is
 * turned off while everything is allowed to everyone authenticated; the
 * configuration file's section is taken as written (its conditions are how
 * `/healthz` stays open beside AlwaysAllow).
 */
function anonymous(ctx: SecurityContext): Authenticator | undefined {
  const setting = ctx.options.authentication?.anonymous ?? true
  if (setting === false) return undefined
  if (setting !== true) return anonymousAuthenticator(setting.paths)
  const modes = ctx.options.authorizationConfiguration?.map((a) => a.type) ?? ctx.options.authorizationModes ?? ['AlwaysAllow']
  if (modes.includes('AlwaysAllow')) {
    ctx.logger.warn({}, 'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false.')
    return undefined
  }
  return anonymousAuthenticator([])
}

/** `externalAddress`: the host and port clients reach the server at, named by service-account issuer discovery. */
export function buildAuthentication(ctx: SecurityContext, externalAddress: () => string = () => '127.0.0.1'): Authentication {
  const serviceAccounts = serviceAccountTokens(ctx, externalAddress)
  const jwt = jwtPart(ctx)
  const tokenParts = tokenAuthenticators(ctx, serviceAccounts, jwt)
  // Upstream's token cache in front of the union, so TokenReview and requests share it as they share the union.
  const tokens = cachedTokenAuthenticator(tokenChain(tokenParts.map((p) => p.value)), {
    now: () => ctx.now().getTime(),
    ...(ctx.options.authentication?.tokenSuccessCacheTtlMs !== undefined ? { successTtlMs: ctx.options.authentication.tokenSuccessCacheTtlMs } : {}),
    ...(ctx.metrics ? { metrics: ctx.metrics } : {}),
  })
  const requestParts = requestAuthenticators(ctx, tokens, tokenParts.length > 0)
  const request = new UnionAuthenticator(
    requestParts.map((p) => p.value),
    anonymous(ctx),
  )
  return {
    request,
    tokens,
    apiAudiences: apiAudiencesOf(ctx),
    serviceAccountTokens: serviceAccounts?.value,
    ...lifeCycleOf([...tokenParts, ...requestParts]),
    replaceJwtAuthenticators: (configs) => {
      const replaced = jwt?.replace(configs)
      // Tokens the old issuers admitted are not kept past the change, nor what a lookup under way brings back.
      tokens.clear()
      return replaced?.then(() => tokens.clear())
    },
  }
}
