/**
 * The Webhook authorizer (`--authorization-mode=Webhook`, or a `Webhook`
 * entry of an AuthorizationConfiguration): each decision is a
 * SubjectAccessReview POSTed to a remote service. As upstream's:
 *
 * - match conditions (CEL over the v1 review) decide whether it is asked at
 *   all; one that is false means no opinion, one that fails follows the
 *   failure policy;
 * - `allowed` allows, `denied` denies, neither is no opinion, with the
 *   answer's reason;
 * - answers are cached by the whole review spec, user included, so one
 *   user's answer never serves another; allowed answers for the authorized
 *   TTL, the others for the unauthorized TTL; a TTL of 0 caches nothing;
 * - a call that fails or an answer that cannot be read is logged and
 *   decided by the failure policy: no opinion (the legacy flags) or deny.
 */
import type { CelProgram } from '../cel/compile.js'
import { evaluate, type SubjectAccessReviewSpec } from '../cel/evaluate.js'
import type { WebhookClient, WebhookTarget } from '../crd/webhook-client.js'
import { base64EncodeText } from '../machinery/base64.js'
import type { Logger } from '../logging/logger.js'
import type { Authorizer, AuthorizerDecision } from './authorizer.js'
import { readReviewStatus, reviewBody, reviewSpec, type ReviewStatus, type SubjectAccessReviewVersion } from './subject-access-review.js'

/** How the authorizer reaches its webhook: what a kubeconfig's current context says, files already read. */
export interface WebhookConnection {
  /** `https://host:port/path` (or http). */
  url: string
  /** PEM of the CAs that may sign the webhook's certificate; the platform's CAs when absent. */
  certificateAuthority?: string
  /** PEM client certificate and key presented to the webhook. */
  clientCertificate?: string
  clientKey?: string
  /** The name the serving certificate must carry, when not the URL's host. */
  serverName?: string
  bearerToken?: string
  insecureSkipTLSVerify?: boolean
}

export interface WebhookAuthorizerOptions {
  /** Names the webhook in log lines. */
  name: string
  connection: WebhookConnection
  subjectAccessReviewVersion: SubjectAccessReviewVersion
  /** Deadline of one call. */
  timeoutMs: number
  /** How long an allowed answer is reused; 0: never. */
  authorizedTTLMs: number
  /** How long any other answer is reused; 0: never. */
  unauthorizedTTLMs: number
  /** What a failed call, an unreadable answer or a failing match condition decides. */
  failurePolicy: 'NoOpinion' | 'Deny'
  /** All must be true for the webhook to be asked; none: always asked. */
  matchConditions: readonly CelProgram[]
}

/** Upstream's default for the legacy flags, which have no timeout of their own. */
export const LEGACY_WEBHOOK_TIMEOUT_MS = 30_000

/** Upstream keeps this many answers; the oldest goes first. */
const CACHE_SIZE = 8192

interface CachedAnswer {
  status: ReviewStatus
  expiresAt: number
}

/** The webhook client's target for a connection read from a kubeconfig. */
export function webhookTarget(c: WebhookConnection): WebhookTarget {
  return {
    url: c.url,
    // The port takes a CA bundle as the API carries one: base64 of the PEM.
    ...(c.certificateAuthority ? { caBundle: base64EncodeText(c.certificateAuthority) } : {}),
    ...(c.serverName ? { serverName: c.serverName } : {}),
    ...(c.clientCertificate && c.clientKey ? { clientCertificate: { certificate: c.clientCertificate, key: c.clientKey } } : {}),
    ...(c.bearerToken ? { bearerToken: c.bearerToken } : {}),
    ...(c.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
  }
}

/** Whether every condition holds; false as soon as one is false, an error only when none is false and one failed. */
function conditionsMatch(conditions: readonly CelProgram[], spec: SubjectAccessReviewSpec): boolean {
  let failure: Error | undefined
  for (const condition of conditions) {
    try {
      const result = evaluate(condition, spec)
      if (result !== true) {
        if (result === false) return false
        throw new Error(`expression '${condition.expression}' did not evaluate to a bool`)
      }
    } catch (err) {
      failure ??= err instanceof Error ? err : new Error(String(err))
    }
  }
  if (failure) throw failure
  return true
}

export function webhookAuthorizer(options: WebhookAuthorizerOptions, client: WebhookClient, logger: Logger, now: () => Date): Authorizer {
  const cache = new Map<string, CachedAnswer>()
  // As upstream, the authorization webhook is control-plane traffic for egress selection.
  const endpoint: WebhookTarget = { ...webhookTarget(options.connection), egress: 'controlplane' }
  const onError: AuthorizerDecision = { decision: options.failurePolicy === 'Deny' ? 'deny' : 'no-opinion', reason: '' }

  const cached = (key: string): ReviewStatus | undefined => {
    const hit = cache.get(key)
    if (!hit) return undefined
    if (hit.expiresAt <= now().getTime()) {
      cache.delete(key)
      return undefined
    }
    return hit.status
  }
  const remember = (key: string, status: ReviewStatus): void => {
    const ttl = status.allowed ? options.authorizedTTLMs : options.unauthorizedTTLMs
    if (ttl <= 0) return
    cache.delete(key)
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
    cache.set(key, { status, expiresAt: now().getTime() + ttl })
  }

  return {
    async authorize(attrs) {
      const spec = reviewSpec(attrs)
      if (options.matchConditions.length) {
        try {
          if (!conditionsMatch(options.matchConditions, spec)) return { decision: 'no-opinion', reason: '' }
        } catch (err) {
          logger.error({ webhook: options.name, err: String(err) }, 'Failed to evaluate the match conditions of the authorization webhook')
          return onError
        }
      }
      const key = JSON.stringify(spec)
      let status = cached(key)
      if (!status) {
        try {
          const reply = await client.post(endpoint, reviewBody(spec, options.subjectAccessReviewVersion), options.timeoutMs)
          status = readReviewStatus(reply, options.subjectAccessReviewVersion)
        } catch (err) {
          // An outage or a misconfigured webhook: logged for the operator, decided by the failure policy.
          logger.error({ webhook: options.name, err: err instanceof Error ? err.message : String(err) }, 'Failed calling webhook')
          return onError
        }
        remember(key, status)
      }
      if (status.evaluationError) logger.warn({ webhook: options.name, evaluationError: status.evaluationError }, 'authorization webhook reported an evaluation error')
      if (status.allowed) return { decision: 'allow', reason: status.reason }
      if (status.denied) return { decision: 'deny', reason: status.reason }
      return { decision: 'no-opinion', reason: status.reason }
    },
  }
}
