/**
 * The errors of the node-agent connections, worded as upstream's: a failure
 * that is no API status (a dial, a certificate) leaves as a 500 with no
 * reason and the error's own text; an agent's non-2xx answer becomes
 * upstream's generic server response for `pods/log` and the pod's name.
 */
import { StatusError, type StatusReason } from '../machinery/status-error.js'

/** A 500 carrying `message` alone, as upstream's ErrorToAPIStatus turns a plain Go error. */
export function plainError(message: string): StatusError {
  return new StatusError(500, '' as StatusReason, message)
}

/** Passes a StatusError on; anything else becomes a plainError with its text. */
export function asPlainStatus(err: unknown): StatusError {
  if (err instanceof StatusError) return err
  return plainError(err instanceof Error ? err.message : String(err))
}

const GENERIC: Record<number, [StatusReason, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  409: ['Conflict', 'the server reported a conflict'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
}

/**
 * Upstream's NewGenericServerResponse for a backend's answer `code` with
 * body `text`, about `resource` (`pods/log`) named `name`, with no verb.
 */
export function genericServerResponse(code: number, text: string, group: string, resource: string, name: string): StatusError {
  let [reason, message]: [StatusReason, string] = GENERIC[code] ?? ['' as StatusReason, `the server responded with the status code ${code} but did not return more information`]
  if (code === 403) [reason, message] = ['Forbidden', text]
  else if (!GENERIC[code] && code >= 500) [reason, message] = ['InternalError', `an error on the server (${JSON.stringify(text)}) has prevented the request from succeeding`]
  const qualified = group ? `${resource}.${group}` : resource
  return new StatusError(code, reason, `${message} ( ${qualified} ${name})`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  })
}
