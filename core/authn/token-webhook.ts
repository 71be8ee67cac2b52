/**
 * The token webhook (`--authentication-token-webhook-config-file`): a
 * TokenReview of the version `--authentication-token-webhook-version` is
 * POSTed to the kubeconfig's server, which says who the token belongs to.
 * Answers, yes and no alike, are cached for the TTL
 * (`--authentication-token-webhook-cache-ttl`) per token and audiences, as
 * upstream caches them; a call that fails for a passing reason (a reset
 * connection, 500, 504, 429) is tried again with upstream's backoff, and a
 * call that still fails is not cached and is a 401.
 */
import type { WebhookClient, WebhookTarget } from '../crd/webhook-client.js'
import type { TokenWebhookOptions } from './authentication-options.js'
import type { Logger } from '../logging/logger.js'
import type { UserInfo } from '../machinery/object.js'
import type { AuthResult } from './authenticator.js'
import type { TokenAuthenticator } from './bearer-token.js'
import { secretDigest } from './constant-time.js'
import { withBackoff } from './webhook-backoff.js'
import { intersectAudiences } from './audiences.js'

/** Upstream's deadline for one webhook call. */
const WEBHOOK_TIMEOUT_MS = 30_000
const MAX_CACHED_ANSWERS = 10_000

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/** The user of an authenticated review's status. */
function userOf(status: Record<string, unknown>): UserInfo {
  const u = isObject(status['user']) ? status['user'] : {}
  const user: UserInfo = { username: typeof u['username'] === 'string' ? u['username'] : '', groups: strings(u['groups']) }
  if (typeof u['uid'] === 'string' && u['uid']) user.uid = u['uid']
  if (isObject(u['extra'])) {
    const extra = Object.fromEntries(Object.entries(u['extra']).map(([k, v]) => [k, strings(v)]))
    if (Object.keys(extra).length) user.extra = extra
  }
  return user
}

/** What the webhook's answer means for the token; throws when the answer is not a TokenReview. */
function readAnswer(reply: unknown, apiVersion: string, wanted: readonly string[] | undefined, implicit: readonly string[]): AuthResult {
  if (!isObject(reply) || reply['kind'] !== 'TokenReview' || reply['apiVersion'] !== apiVersion) {
    throw new Error(`the webhook did not answer with a ${apiVersion} TokenReview`)
  }
  const status = isObject(reply['status']) ? reply['status'] : {}
  let audiences: string[] = []
  if (wanted?.length) {
    // A webhook that names no audiences vouches for the API's own only, as upstream reads it: never
    // for whatever audience a TokenReview happens to ask about.
    const given = strings(status['audiences'])
    audiences = intersectAudiences(wanted, given.length ? given : implicit)
    // A token meant for other audiences is not this server's business (upstream: unauthenticated, no error).
    if (!audiences.length) return undefined
  }
  if (status['authenticated'] !== true) {
    const error = typeof status['error'] === 'string' ? status['error'] : ''
    return error ? { error } : undefined
  }
  return { user: userOf(status), ...(audiences.length ? { audiences } : {}) }
}

/** `apiAudiences`: the server's own (`--api-audiences`), which a webhook naming none is taken to vouch for. */
export function tokenWebhookAuthenticator(
  options: TokenWebhookOptions,
  apiAudiences: readonly string[],
  client: WebhookClient,
  logger: Logger,
  now: () => Date,
): TokenAuthenticator {
  const version = options.version ?? 'v1beta1'
  const apiVersion = `authentication.k8s.io/${version}`
  const ttl = options.cacheTtlMs ?? 120_000
  const target: WebhookTarget = {
    url: options.url,
    ...(options.certificateAuthority ? { caBundle: btoa(options.certificateAuthority) } : {}),
    ...(options.serverName ? { serverName: options.serverName } : {}),
    ...(options.clientCertificate ? { clientCertificate: options.clientCertificate } : {}),
    // As upstream, the token webhook is control-plane traffic for egress selection.
    egress: 'controlplane',
  }
  const cache = new Map<string, { result: AuthResult; expiresAt: number }>()

  return {
    async authenticateToken(token, audiences) {
      // Filed by digest, not by the token: no lookup compares a caller's guess with a cached token.
      const key = secretDigest(JSON.stringify([token, audiences ?? []]))
      const hit = cache.get(key)
      if (hit && hit.expiresAt > now().getTime()) return hit.result
      if (hit) cache.delete(key)

      const spec: Record<string, unknown> = { token }
      if (audiences?.length) spec['audiences'] = audiences
      const review = { apiVersion, kind: 'TokenReview', metadata: { creationTimestamp: null }, spec, status: { user: {} } }
      let result: AuthResult
      try {
        result = readAnswer(await withBackoff(() => client.post(target, review, WEBHOOK_TIMEOUT_MS)), apiVersion, audiences, apiAudiences)
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        logger.warn({ webhook: options.url, err: message }, 'the token webhook failed')
        return { error: message }
      }
      if (ttl > 0) {
        if (cache.size >= MAX_CACHED_ANSWERS) {
          const oldest = cache.keys().next().value
          if (oldest !== undefined) cache.delete(oldest)
        }
        cache.set(key, { result, expiresAt: now().getTime() + ttl })
      }
      return result
    },
  }
}
