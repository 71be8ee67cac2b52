/**
 * One description of the authorizer chain, whichever way it was given:
 * `--authorization-mode` names (with `--authorization-policy-file` and the
 * `--authorization-webhook-*` flags) or the `authorizers` of an
 * AuthorizationConfiguration, whose webhooks carry their own connection,
 * timeout, TTLs, match conditions and failure policy.
 */
import type { AuthorizerConfiguration, LoadedAuthorizationConfiguration } from '../config/authorization.js'
import type { SubjectAccessReviewVersion } from './subject-access-review.js'
import { LEGACY_WEBHOOK_TIMEOUT_MS, type WebhookAuthorizerOptions, type WebhookConnection } from './webhook.js'

export interface AuthorizerSpec {
  /** The mode: AlwaysAllow, AlwaysDeny, ABAC, Node, RBAC, Webhook. */
  type: string
  /** Names it in log lines: the configuration's name, or the mode in lower case. */
  name: string
  /** For `Webhook`: how to call it and what to do with its answers. */
  webhook?: WebhookAuthorizerOptions
}

/** `--authorization-webhook-config-file` and its companion flags. */
export interface LegacyWebhookOptions {
  connection: WebhookConnection
  /** `--authorization-webhook-version`. @default 'v1beta1' */
  version?: SubjectAccessReviewVersion
  /** `--authorization-webhook-cache-authorized-ttl`; 0 caches nothing. @default 300000 */
  authorizedTTLMs?: number
  /** `--authorization-webhook-cache-unauthorized-ttl`; 0 caches nothing. @default 30000 */
  unauthorizedTTLMs?: number
}

/**
 * The chain of `--authorization-mode`. The legacy webhook has no match
 * conditions and, as upstream's flags, no opinion when its call fails.
 */
export function legacyAuthorizerSpecs(modes: readonly string[], options: { authorizationWebhook?: LegacyWebhookOptions }): AuthorizerSpec[] {
  return modes.map((type) => {
    const spec: AuthorizerSpec = { type, name: type.toLowerCase() }
    const legacy = options.authorizationWebhook
    if (type === 'Webhook' && legacy) {
      spec.webhook = {
        name: 'webhook',
        connection: legacy.connection,
        subjectAccessReviewVersion: legacy.version ?? 'v1beta1',
        timeoutMs: LEGACY_WEBHOOK_TIMEOUT_MS,
        authorizedTTLMs: legacy.authorizedTTLMs ?? 300_000,
        unauthorizedTTLMs: legacy.unauthorizedTTLMs ?? 30_000,
        failurePolicy: 'NoOpinion',
        matchConditions: [],
      }
    }
    return spec
  })
}

/**
 * The chain of a loaded AuthorizationConfiguration. `connectionOf` gives
 * the connection of a webhook's `connectionInfo` (the runtime reads the
 * kubeconfig file it names); it throws when there is none.
 */
export function configuredAuthorizerSpecs(
  config: LoadedAuthorizationConfiguration,
  connectionOf: (info: NonNullable<AuthorizerConfiguration['webhook']>['connectionInfo']) => WebhookConnection,
): AuthorizerSpec[] {
  return config.authorizers.map((a) => {
    const spec: AuthorizerSpec = { type: a.type, name: a.name }
    const w = a.webhook
    if (a.type === 'Webhook' && w) {
      spec.webhook = {
        name: a.name,
        connection: connectionOf(w.connectionInfo),
        subjectAccessReviewVersion: w.subjectAccessReviewVersion === 'v1' ? 'v1' : 'v1beta1',
        timeoutMs: w.timeout,
        authorizedTTLMs: w.cacheAuthorizedRequests ? w.authorizedTTL : 0,
        unauthorizedTTLMs: w.cacheUnauthorizedRequests ? w.unauthorizedTTL : 0,
        failurePolicy: w.failurePolicy === 'Deny' ? 'Deny' : 'NoOpinion',
        matchConditions: a.matchConditionPrograms,
      }
    }
    return spec
  })
}
