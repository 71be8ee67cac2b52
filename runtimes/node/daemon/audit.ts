/**
 * The daemon's auditing from its flags: the policy file, the log backend
 * and the webhook backend, each in its mode (blocking, blocking-strict,
 * batch) and truncating when asked, as upstream's AuditOptions builds them.
 */
import { BatchingBackend, type DroppedEvents } from '../../../core/audit/batch.js'
import { TruncatingBackend } from '../../../core/audit/truncate.js'
import type { AuditBackend, AuditPolicy } from '../../../core/audit/types.js'
import { AuditWebhookBackend } from '../../../core/audit/webhook.js'
import type { KubeconfigConnection } from '../../../core/config/kubeconfig.js'
import type { WebhookTarget } from '../../../core/crd/webhook-client.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { AuditOptions } from '../../../core/options/api-server-options.js'
import type { Logger } from '../../../core/logging/logger.js'
import { AuditLogBackend, type SharedRotation } from './audit-log.js'
import { type ServingWorker, servingWorker } from './workers.js'
import { auditWebhookSender, auditWebhookTarget } from './audit-webhook.js'
import type { EgressDialers } from '../adapter/egress-dialer.js'

type Dropped = DroppedEvents
type Values = ParsedFlags['values']

/**
 * Batches sent to one backend at a time in batch mode. Upstream starts a
 * sender per batch without a bound; here a receiver that hangs holds at
 * most this many batches, and the buffer in front of it fills and drops.
 */
const MAX_BATCHES_IN_FLIGHT = 16

/**
 * Batching, then truncation, around a backend, as `--audit-<backend>-batch-*`
 * and `--audit-<backend>-truncate-*` say. Truncation is outermost, as
 * upstream builds it: an event is cut to size (or dropped) as it is
 * recorded, so the buffer holds events of at most the largest size, and a
 * full batch is never measured all at once. The batches the buffer sends
 * are still split by size, from the sizes measured then.
 */
function wrapped(backend: AuditBackend, values: Values, name: 'log' | 'webhook', dropped: Dropped): AuditBackend {
  const flag = <S extends string>(suffix: S) => values[`audit-${name}-${suffix}` as keyof Values] as never
  const truncating = (inner: AuditBackend): AuditBackend =>
    flag('truncate-enabled')
      ? new TruncatingBackend(inner, { maxEventSize: flag('truncate-max-event-size'), maxBatchSize: flag('truncate-max-batch-size') }, dropped)
      : inner
  let out = backend
  if (flag('mode') === 'batch') {
    out = truncating(out)
    out = new BatchingBackend(
      out,
      {
        bufferSize: flag('batch-buffer-size'),
        maxBatchSize: flag('batch-max-size'),
        maxBatchWaitMs: flag('batch-max-wait'),
        maxInFlight: MAX_BATCHES_IN_FLIGHT,
        ...(flag('batch-throttle-enable') ? { throttleQps: flag('batch-throttle-qps'), throttleBurst: flag('batch-throttle-burst') } : {}),
      },
      dropped,
    )
  }
  return truncating(out)
}

/** A worker of `--workers` shares the file with the others: the primary rotates it for them all. */
function sharedBy(worker: ServingWorker | undefined, path: string): { shared?: SharedRotation } {
  if (!worker || path === '-') return {}
  return { shared: { request: (inode) => worker.rotateAuditLog(inode), onRotated: (reopen) => worker.onAuditLogRotated(reopen) } }
}

function logBackend(values: Values, dropped: Dropped, logger: Logger): AuditBackend | undefined {
  const path = values['audit-log-path']
  if (!path) return undefined
  const log = new AuditLogBackend({
    path,
    format: values['audit-log-format'] === 'legacy' ? 'legacy' : 'json',
    maxSizeMB: values['audit-log-maxsize'],
    maxBackups: values['audit-log-maxbackup'],
    maxAgeDays: values['audit-log-maxage'],
    compress: values['audit-log-compress'],
    strict: values['audit-log-mode'] === 'blocking-strict',
    onHousekeepingError: (err) => logger.warn({ err: err.message, path }, 'cannot compress or prune the rotated audit log files'),
    ...sharedBy(servingWorker(), path),
  })
  log.ensureLogFile()
  return wrapped(log, values, 'log', dropped)
}

function webhookBackend(values: Values, target: WebhookTarget, dropped: Dropped, dialers?: EgressDialers): AuditBackend {
  const webhook = new AuditWebhookBackend(auditWebhookSender(target, dialers), {
    initialBackoffMs: values['audit-webhook-initial-backoff'],
    strict: values['audit-webhook-mode'] === 'blocking-strict',
  })
  return wrapped(webhook, values, 'webhook', dropped)
}

/**
 * Auditing as the flags configure it; undefined without a policy or without
 * a backend (upstream records nothing then). Events a backend loses are
 * counted and logged by the server's auditor. Throws AuditWebhookConfigError
 * for a webhook kubeconfig it cannot honour.
 */
export function auditOptions(
  parsed: ParsedFlags,
  policy: AuditPolicy | undefined,
  webhook: KubeconfigConnection | undefined,
  logger: Logger,
  dialers?: EgressDialers,
): AuditOptions | undefined {
  const { values } = parsed
  if (!policy) {
    if (values['audit-log-path'] || webhook) logger.info({}, 'No audit policy file provided, no events will be recorded')
    return undefined
  }
  if (!values['audit-log-path'] && !webhook) {
    logger.warn({}, '--audit-policy-file is set but no audit backend is (--audit-log-path, --audit-webhook-config-file): no events are recorded')
    return undefined
  }
  // Read now, so that a kubeconfig the backend cannot honour stops start-up before anything is built.
  const target = webhook ? auditWebhookTarget(webhook) : undefined
  return {
    policy,
    backends: (dropped) =>
      [logBackend(values, dropped, logger), target ? webhookBackend(values, target, dropped, dialers) : undefined].filter((b) => b !== undefined),
  }
}
