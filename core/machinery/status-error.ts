/**
 * Every failure leaves the server as a `metav1.Status` built here. The
 * constructors word their messages the way upstream's `api/errors` package
 * does, so clients (kubectl above all) print what they print against upstream.
 */
import { goStrconvQuote } from './go-strconv.js'

export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable'

export interface StatusCause {
  reason?: string
  message?: string
  field?: string
}

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

export interface Status {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, never> | { resourceVersion?: string; continue?: string }
  status: 'Success' | 'Failure'
  message?: string
  reason?: StatusReason
  details?: StatusDetails
  code: number
}

export class StatusError extends Error {
  readonly code: number
  readonly reason: StatusReason
  readonly details: StatusDetails | undefined
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>
  /** List metadata a Status may carry: the fresh continue token of an expired list. */
  listMeta: { continue?: string } | undefined

  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    details?: StatusDetails,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'StatusError'
    this.code = code
    this.reason = reason
    this.details = details
    this.headers = headers
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listMeta ?? {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    }
    // A reason is left out when there is none, as Go's omitempty does (a webhook's own Status may have none).
    if (!this.reason) delete status.reason
    if (this.details) status.details = this.details
    return status
  }
}

/** Identifies the kind of object an error is about: upstream's GroupResource. */
export interface GroupResource {
  group: string
  resource: string
}

/** `pods` for the core group, `deployments.apps` otherwise, as upstream prints a GroupResource. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource
}

function details(gr: GroupResource, name: string): StatusDetails {
  const d: StatusDetails = { name, kind: gr.resource }
  if (gr.group) d.group = gr.group
  return d
}

export function notFound(gr: GroupResource, name: string): StatusError {
  // `%q` of the name, as upstream words it: a URL may name an object `a"b` or `\x00`.
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} ${goStrconvQuote(name)} not found`, details(gr, name))
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(gr)} ${goStrconvQuote(name)} already exists`, details(gr, name))
}

export function conflict(gr: GroupResource, name: string, reason: string): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${reason}`,
    details(gr, name),
  )
}

/** The message upstream uses when an update carries a stale resourceVersion. */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again'

/** A path that names no route or resource, as upstream's generic 404. */
export function resourceNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {})
}

/**
 * A method the URL's route does not serve (a POST to one object, a DELETE of
 * a collection that cannot be deleted): upstream's router answers for it,
 * before any resource is involved.
 */
export function methodNotAllowed(): StatusError {
  return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {})
}

/**
 * Upstream's generic 422 (NewGenericServerResponse with nothing named): all
 * a client learns of a JSON patch that does not apply, or of a strategic
 * merge of lists of lists.
 */
export function requestRejected(): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {})
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message)
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return new StatusError(401, 'Unauthorized', message)
}

export function forbidden(gr: GroupResource, name: string, why: string): StatusError {
  // Go's %q: a name holding `"` or `\` is shown escaped, as upstream's NewForbidden prints it.
  const subject = name ? `${qualifiedResource(gr)} ${JSON.stringify(name)}` : qualifiedResource(gr)
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details(gr, name))
}

export function methodNotSupported(gr: GroupResource, action: string): StatusError {
  return new StatusError(
    405,
    'MethodNotAllowed',
    `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`,
    details(gr, ''),
  )
}

export function notAcceptable(accepted: readonly string[]): StatusError {
  return new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`)
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): StatusError {
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    contentType ? { kind: contentType } : undefined,
  )
}

/** Upstream's NewRequestEntityTooLargeError: a body past its limit in bytes (`limit is N`), or what else one request may not exceed. */
export function requestEntityTooLarge(limit: number | string): StatusError {
  const why = typeof limit === 'number' ? `limit is ${limit}` : limit
  return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: ${why}`)
}

export function gone(message: string): StatusError {
  return new StatusError(410, 'Gone', message)
}

export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message)
}

export function resourceExpired(message: string): StatusError {
  return new StatusError(410, 'Expired', message)
}

export function timeout(message: string, retryAfterSeconds = 0): StatusError {
  const d: StatusDetails | undefined = retryAfterSeconds ? { retryAfterSeconds } : undefined
  return new StatusError(504, 'Timeout', `Timeout: ${message}`, d)
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message)
}

export function tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return new StatusError(
    429,
    'TooManyRequests',
    message,
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  )
}

export function internalError(cause: unknown): StatusError {
  const text = cause instanceof Error ? cause.message : String(cause)
  return new StatusError(500, 'InternalError', `Internal error occurred: ${text}`, {
    causes: [{ message: text }],
  })
}

/** True when `err` is a StatusError with this HTTP code. */
export function hasStatusCode(err: unknown, code: number): boolean {
  return err instanceof StatusError && err.code === code
}

/** Turns anything thrown into a StatusError; unknown errors become 500s. */
export function asStatusError(err: unknown): StatusError {
  return err instanceof StatusError ? err : internalError(err)
}
