/**
 * How a webhook's refusal or failure reaches the client, worded as
 * upstream's webhook/errors and util/webhook do.
 */
import { badRequest, StatusError, type StatusDetails, type StatusReason } from '../../machinery/status-error.js'

/**
 * A call that did not produce a usable answer (unreachable, timed out, an
 * unreadable reply): the failure policy decides whether it refuses the request.
 */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
    /**
     * The HTTP code upstream gives the failure, for the webhook metrics: the
     * webhook's own non-2xx status, 503 when it could not be reached or its
     * answer was unusable, 400 when no request could be made for it.
     */
    readonly code = 500,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`)
    this.name = 'CallingWebhookError'
  }
}

/** The `result` Status of an answer that did not allow the request. */
export interface WebhookResult {
  code?: number
  status?: string
  message?: string
  reason?: string
  details?: StatusDetails
}

/**
 * upstream's ToStatusErr: the webhook's own Status with its code (at least
 * 400), its reason and details, and a message that names the webhook.
 */
export function webhookDenied(webhookName: string, result: WebhookResult | undefined): StatusError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`
  const code = typeof result?.code === 'number' && result.code >= 400 ? result.code : 400
  const message = result?.message ? `${deniedBy}: ${result.message}` : result?.reason ? `${deniedBy}: ${result.reason}` : `${deniedBy} without explanation`
  return new StatusError(code, (result?.reason ?? '') as StatusReason, message, result?.details)
}

/** A dry-run request reaching a webhook that may have side effects: 400, whatever the failure policy. */
export function dryRunUnsupported(webhookName: string): StatusError {
  return badRequest(`admission webhook "${webhookName}" does not support dry run`)
}
