/**
 * Each webhook call counted and timed as upstream's dispatchers record it:
 * `apiserver_admission_webhook_admission_duration_seconds` and
 * `apiserver_admission_webhook_request_total` for every call (type `admit`
 * for a mutating webhook, `validating` for a validating one), with the HTTP
 * code of the outcome (200 allowed, the refusal's code, the failed call's
 * code, 0 for an error of the server's own) and whether it refused the
 * request; `apiserver_admission_webhook_rejection_count` for each refusal,
 * and `apiserver_admission_webhook_fail_open_count` when failurePolicy
 * Ignore lets a failed call through.
 */
import type { StatusError } from '../../machinery/status-error.js'
import {
  ADMISSION_WEBHOOK_DURATION,
  ADMISSION_WEBHOOK_FAIL_OPEN,
  ADMISSION_WEBHOOK_REJECTIONS,
  ADMISSION_WEBHOOK_REQUESTS,
} from '../../metrics/definitions.js'
import type { Metrics } from '../../metrics/metrics.js'
import { CallingWebhookError } from './errors.js'
import type { AdmissionWebhook } from './webhook.js'

/** Upstream's step type label: `admit` for mutating webhooks. */
export type WebhookStepType = 'admit' | 'validating'

/** How one call ended: allowed, refused by the webhook's answer, or failed (any other error). */
export type WebhookCallEnd = { allowed: true } | { denied: StatusError } | { failed: unknown }

interface Outcome {
  rejected: boolean
  code: number
  /** The rejection's kind, when the call refused the request. */
  errorType?: 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error'
  /** A failed call that failurePolicy Ignore let through. */
  failedOpen?: boolean
}

function outcomeOf(hook: AdmissionWebhook, end: WebhookCallEnd): Outcome {
  if ('allowed' in end) return { rejected: false, code: 200 }
  if ('denied' in end) return { rejected: true, code: end.denied.code, errorType: 'no_error' }
  const err = end.failed
  if (err instanceof CallingWebhookError) {
    if (hook.failurePolicy === 'Ignore') return { rejected: false, code: err.code, failedOpen: true }
    return { rejected: true, code: err.code, errorType: 'calling_webhook_error' }
  }
  // Upstream's dispatcher records an error that is not a webhook's (a dry run refused, a bad patch) with code 0.
  return { rejected: true, code: 0, errorType: 'apiserver_internal_error' }
}

/** Records one call that started at `startedMs` (performance.now()) and ended as `end`. */
export function observeWebhookCall(
  metrics: Metrics | undefined,
  hook: AdmissionWebhook,
  type: WebhookStepType,
  operation: string,
  startedMs: number,
  end: WebhookCallEnd,
): void {
  if (!metrics) return
  const { rejected, code, errorType, failedOpen } = outcomeOf(hook, end)
  const seconds = (performance.now() - startedMs) / 1000
  metrics.record(ADMISSION_WEBHOOK_DURATION, { name: hook.name, operation, rejected: String(rejected), type }, seconds)
  metrics.inc(ADMISSION_WEBHOOK_REQUESTS, { code: String(code), name: hook.name, operation, rejected: String(rejected), type })
  if (errorType) metrics.inc(ADMISSION_WEBHOOK_REJECTIONS, { error_type: errorType, name: hook.name, operation, rejection_code: String(code), type })
  if (failedOpen) metrics.inc(ADMISSION_WEBHOOK_FAIL_OPEN, { name: hook.name, type })
}

