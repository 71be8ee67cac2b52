/**
 * What upstream's proxy transport adds to a proxied request and changes in
 * its answer (the apimachinery proxy's Transport and corsRemovingTransport):
 * the backend learns the path the client asked the API server for
 * (`X-Forwarded-Uri`) and who asked (`X-Forwarded-For`); a redirect of the
 * backend to one of its own paths is sent back through the proxy; and the
 * backend's CORS headers are dropped, so a pod cannot grant another origin
 * reads of the API server's. The links of an HTML page are rewritten as a
 * redirect is (html-links.ts), through the page's gzip or deflate coding.
 */
import { joinPreservingTrailingSlash } from '../machinery/clean-path.js'
import { rewriteHtmlLinks } from './html-links.js'

/** Set by the backend, never passed on: the API server's own CORS settings decide. */
const BACKEND_CORS_HEADERS = ['access-control-allow-credentials', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin']

/** The client's address appended to the `X-Forwarded-For` it sent, as Go's AppendForwardedForHeader does. */
export function appendForwardedFor(headers: Headers, remoteAddress: string | undefined): void {
  if (!remoteAddress) return
  // A v4 client on a dual-stack listener is named as Go names it, unmapped.
  const client = remoteAddress.replace(/^::ffff:(?=\d+\.)/, '')
  const prior = headers.get('x-forwarded-for')
  headers.set('x-forwarded-for', prior ? `${prior}, ${client}` : client)
}

/** The path the client asked for: the proxy subresource's own path, then the backend's. */
export function forwardedUri(proxyPrefix: string, backendPath: string): string {
  return joinPreservingTrailingSlash(proxyPrefix, backendPath)
}

/** Where the answer was fetched from, and through what. */
export interface ProxiedAnswerContext {
  /** The API server path up to and including `/proxy` (`/api/v1/namespaces/ns/services/web/proxy`). */
  proxyPrefix: string
  /** The backend's host and port, as dialled. */
  backendHost: string
  /** The Host the client asked the API server by. */
  requestHost: string
  /**
   * The scheme and host the proxy's transport was given (`https://10.0.0.7:443`),
   * which a rewritten redirect then names; unset for the pods, services and nodes
   * proxies, whose transport is given none (upstream's Transport.Scheme and Host).
   */
  transportOrigin?: string
}

/**
 * A redirect to the backend's own host (or to the API server's, or with no
 * host) on an absolute path, sent through the proxy instead (upstream's
 * rewriteURL; the scheme and host become the transport's, or without one are
 * dropped unless they were the API server's). Another host's URL, or a
 * relative one, is left as it is.
 */
export function rewriteLocation(location: string, context: ProxiedAnswerContext): string {
  const parts = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*:))?(?:\/\/([^/?#]*))?([^?#]*)(.*)$/s.exec(location)
  if (!parts) return location
  const [, scheme = '', host, path = '', rest = ''] = parts
  // A scheme with no authority (`mailto:x`) names no path of the backend.
  if (scheme && host === undefined) return location
  if (host && host !== context.backendHost && host !== context.requestHost) return location
  if (!path.startsWith('/')) return location
  const origin = context.transportOrigin ?? (host && host === context.requestHost ? `${scheme}//${host}` : '')
  if (path.startsWith(context.proxyPrefix)) return `${origin}${path}${rest}`
  return `${origin}${joinPreservingTrailingSlash(context.proxyPrefix, path)}${rest}`
}

/** Whether the answer is an HTML page, by upstream's test: the media type exactly `text/html`. */
function isHtml(headers: Headers): boolean {
  return (headers.get('content-type') ?? '').split(';', 1)[0]!.trim() === 'text/html'
}

/** The page's body with its links rewritten, decoded and encoded again in its coding; undefined when its coding is unknown. */
function rewrittenPage(body: ReadableStream<Uint8Array>, coding: string, context: ProxiedAnswerContext): ReadableStream<Uint8Array> | undefined {
  const rewrite = (url: string): string => rewriteLocation(url, context)
  if (coding === '') return rewriteHtmlLinks(body, rewrite)
  // A page in another coding is passed as it came, as upstream does.
  if (coding !== 'gzip' && coding !== 'deflate') return undefined
  return rewriteHtmlLinks(body.pipeThrough(new DecompressionStream(coding)), rewrite).pipeThrough(new CompressionStream(coding))
}

/** The backend's answer as the client gets it: CORS headers dropped, a redirect or an HTML page's links through the proxy. */
export function proxiedAnswer(answer: Response, context: ProxiedAnswerContext): Response {
  const location = answer.headers.get('location')
  const cors = BACKEND_CORS_HEADERS.some((name) => answer.headers.has(name))
  // As upstream's transport: a redirect's Location is rewritten, otherwise an HTML page's links.
  const page = !location && answer.body !== null && isHtml(answer.headers) ? rewrittenPage(answer.body, answer.headers.get('content-encoding') ?? '', context) : undefined
  if (!location && !cors && !page) return answer
  const headers = new Headers(answer.headers)
  for (const name of BACKEND_CORS_HEADERS) headers.delete(name)
  if (location) headers.set('location', rewriteLocation(location, context))
  // The rewritten page's length is not the backend's.
  if (page) headers.delete('content-length')
  return new Response(page ?? answer.body, { status: answer.status, statusText: answer.statusText, headers })
}
