/**
 * The filters remove credentials and identity headers from the request once
 * they have been read (as upstream's authentication, impersonation and
 * request-header filters do), so that nothing later can pass them on. Some
 * runtimes hand a handler a Request whose headers are immutable (Deno's serve):
 * such a request is copied once, into one whose headers may change.
 */

/** A name no client sends: deleting it changes nothing, but throws on immutable headers. */
const PROBE = 'x-kube-apiserver-ts-mutable-probe'

export function withMutableHeaders(request: Request): Request {
  try {
    request.headers.delete(PROBE)
    return request
  } catch {
    // The copy has its own headers (mutable), the same body stream and the same abort signal.
    return new Request(request)
  }
}
