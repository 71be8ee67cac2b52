/**
 * The audit webhook's connection (`--audit-webhook-config-file`): the
 * kubeconfig's current context read into the webhook client's target (the
 * CA to trust, the client certificate or token to present), and the sender
 * core's AuditWebhookBackend posts its EventLists through, with upstream's
 * 30 s deadline per call.
 */
import { readFileSync } from 'node:fs'
import type { AuditWebhookSender } from '../../../core/audit/webhook.js'
import { type FileOrData, type KubeconfigConnection, unsupportedConnectionSettings } from '../../../core/config/kubeconfig.js'
import type { WebhookTarget } from '../../../core/crd/webhook-client.js'
import type { EgressDialers } from '../adapter/egress-dialer.js'
import { nodeWebhookClient } from './webhook-client.js'

/** upstream's defaultRequestTimeout of a generic webhook call, reading the answer included. */
const AUDIT_WEBHOOK_TIMEOUT_MS = 30_000

const FLAG = '--audit-webhook-config-file'

/** A kubeconfig setting the audit webhook cannot honour: start-up stops rather than send events otherwise than configured. */
export class AuditWebhookConfigError extends Error {}

function pem(source: FileOrData | undefined, what: string): string | undefined {
  if (source === undefined) return undefined
  if ('data' in source) return new TextDecoder().decode(source.data)
  try {
    return readFileSync(source.file, 'utf8')
  } catch (err) {
    throw new AuditWebhookConfigError(`${FLAG}: cannot read the ${what} ${source.file}: ${(err as Error).message}`)
  }
}

/** Where and how events are sent, from the kubeconfig's current context. */
export function auditWebhookTarget(c: KubeconfigConnection): WebhookTarget {
  const unsupported = unsupportedConnectionSettings(c)
  if (unsupported) throw new AuditWebhookConfigError(`${FLAG}: ${unsupported}; use a client certificate or a token`)
  if (Boolean(c.clientCertificate) !== Boolean(c.clientKey)) {
    throw new AuditWebhookConfigError(`${FLAG}: client-certificate and client-key must be given together`)
  }
  let token = c.token
  if (token === undefined && c.tokenFile) {
    try {
      token = readFileSync(c.tokenFile, 'utf8').trim()
    } catch (err) {
      throw new AuditWebhookConfigError(`${FLAG}: cannot read the token file ${c.tokenFile}: ${(err as Error).message}`)
    }
  }
  const ca = pem(c.certificateAuthority, 'certificate authority')
  const cert = pem(c.clientCertificate, 'client certificate')
  const key = pem(c.clientKey, 'client key')
  return {
    url: c.server,
    ...(ca ? { caBundle: Buffer.from(ca).toString('base64') } : {}),
    ...(cert && key ? { clientCertificate: { certificate: cert, key } } : {}),
    ...(c.tlsServerName ? { serverName: c.tlsServerName } : {}),
    ...(token ? { bearerToken: token } : {}),
    ...(c.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
    // As upstream, the audit webhook is control-plane traffic for egress selection.
    egress: 'controlplane',
  }
}

/** Posts EventLists to the target over a client of its own, closed when auditing shuts down. */
export function auditWebhookSender(target: WebhookTarget, dialers?: EgressDialers): AuditWebhookSender {
  const client = nodeWebhookClient(dialers)
  return {
    send: (body) => client.postIgnoringReply(target, body, AUDIT_WEBHOOK_TIMEOUT_MS),
    close: () => client.close(),
  }
}
