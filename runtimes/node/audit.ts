/**
 * The daemon's auditing from its flags: the policy file, and the log backend
 * in its mode (blocking, blocking-strict, batch) with truncation when asked.
 * The webhook backend is not built yet; its flags are refused at start-up.
 */
import { BatchingBackend } from '../../core/audit/batch.js'
import { TruncatingBackend } from '../../core/audit/truncate.js'
import type { AuditBackend, AuditEvent, AuditPolicy } from '../../core/audit/types.js'
import type { ParsedFlags } from '../../core/options/flags/index.js'
import type { AuditOptions } from '../../core/options/api-server-options.js'
import type { Logger } from '../../core/ports.js'
import { AuditLogBackend } from './audit-log.js'

/** Where events a backend lost are reported until the server's auditor exists (it counts them itself). */
type Dropped = (plugin: string, reason: string, events: readonly AuditEvent[]) => void

function logBackend(values: ParsedFlags['values'], dropped: Dropped): AuditBackend | undefined {
  const path = values['audit-log-path']
  if (!path) return undefined
  const mode = values['audit-log-mode']
  let backend: AuditBackend = new AuditLogBackend({
    path,
    format: values['audit-log-format'] === 'legacy' ? 'legacy' : 'json',
    maxSizeMB: values['audit-log-maxsize'],
    maxBackups: values['audit-log-maxbackup'],
    maxAgeDays: values['audit-log-maxage'],
    compress: values['audit-log-compress'],
    strict: mode === 'blocking-strict',
  })
  if (values['audit-log-truncate-enabled']) {
    backend = new TruncatingBackend(
      backend,
      { maxEventSize: values['audit-log-truncate-max-event-size'], maxBatchSize: values['audit-log-truncate-max-batch-size'] },
      dropped,
    )
  }
  if (mode === 'batch') {
    backend = new BatchingBackend(
      backend,
      {
        bufferSize: values['audit-log-batch-buffer-size'],
        maxBatchSize: values['audit-log-batch-max-size'],
        maxBatchWaitMs: values['audit-log-batch-max-wait'],
        ...(values['audit-log-batch-throttle-enable']
          ? { throttleQps: values['audit-log-batch-throttle-qps'], throttleBurst: values['audit-log-batch-throttle-burst'] }
          : {}),
      },
      dropped,
    )
  }
  return backend
}

/** Auditing as the flags configure it; undefined without a policy or without a backend (upstream records nothing then). */
export function auditOptions(parsed: ParsedFlags, policy: AuditPolicy | undefined, logger: Logger): AuditOptions | undefined {
  if (!policy) return undefined
  const dropped: Dropped = (plugin, reason, events) => logger.error({ plugin, reason, events: events.length }, 'Error in audit plugin affects events')
  const log = logBackend(parsed.values, dropped)
  if (!log) {
    logger.warn({}, '--audit-policy-file is set but no audit backend is (--audit-log-path): no events are recorded')
    return undefined
  }
  return { policy, backends: [log] }
}
