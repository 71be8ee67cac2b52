/**
 * One call of a webhook: where (a URL, or a Service reference resolved to
 * its endpoint, the certificate then checked for `<service>.<namespace>.svc`),
 * trusting the configuration's caBundle, within its `timeoutSeconds`; the
 * server's deadline rides along as `?timeout=<n>s`, as upstream's client
 * sends it. Every failure is a CallingWebhookError, for the failure policy.
 */
import { failureStatus, type WebhookClient, type WebhookTarget } from '../../crd/webhook-client.js'
import { CallingWebhookError } from './errors.js'
import { type AdmissionAnswer, readAdmissionAnswer, type ReviewVersion } from './review.js'
import type { AdmissionWebhook } from './webhook.js'

export interface CallDeps {
  client: WebhookClient
  /** A Service reference to the base URL of its endpoint (`https://10.0.0.1:8443`). */
  resolveService: (ref: { namespace: string; name: string; port?: number }) => Promise<string>
}

async function targetOf(hook: AdmissionWebhook, deps: CallDeps): Promise<WebhookTarget> {
  const { url, service, caBundle } = hook.clientConfig
  const trust = caBundle ? { caBundle } : {}
  // As upstream: a webhook named by URL is reached over the control plane's egress, one named by a service over the cluster's.
  if (url) return { url, ...trust, egress: 'controlplane' }
  if (!service) throw new Error('the webhook has neither a url nor a service')
  const base = (await deps.resolveService(service)).replace(/\/+$/, '')
  return { url: base + (service.path ?? ''), ...trust, serverName: `${service.name}.${service.namespace}.svc`, egress: 'cluster' }
}

const withTimeout = (url: string, seconds: number): string => `${url}${url.includes('?') ? '&' : '?'}timeout=${seconds}s`

/** POSTs the review and reads the answer; throws CallingWebhookError on any failure. */
export async function callWebhook(
  hook: AdmissionWebhook,
  review: Record<string, unknown>,
  version: ReviewVersion,
  uid: string,
  deps: CallDeps,
): Promise<AdmissionAnswer> {
  let target: WebhookTarget
  try {
    target = await targetOf(hook, deps)
  } catch (err) {
    throw new CallingWebhookError(hook.name, `could not get REST client: ${err instanceof Error ? err.message : String(err)}`, 400)
  }
  let reply: unknown
  try {
    reply = await deps.client.post({ ...target, url: withTimeout(target.url ?? '', hook.timeoutSeconds) }, review, hook.timeoutSeconds * 1000)
  } catch (err) {
    throw new CallingWebhookError(hook.name, `failed to call webhook: ${err instanceof Error ? err.message : String(err)}`, failureStatus(err) ?? 503)
  }
  try {
    return await readAdmissionAnswer(reply, version, uid, hook.type === 'mutating')
  } catch (err) {
    throw new CallingWebhookError(hook.name, err instanceof Error ? err.message : String(err), 503)
  }
}
