/**
 * Forwards a request for an aggregated group/version to its extension
 * server, after this server authenticated, audited and authorized it like
 * any other (upstream's proxyHandler): the caller's identity goes in the
 * request-header names over a connection that presents the proxy client
 * certificate; an unavailable APIService or an unreachable backend is a 503;
 * a redirect from the backend is refused (`--aggregator-reject-forwarding-redirect`).
 * As upstream's proxy transport, X-Forwarded-Uri, -Host, -Proto and -For go
 * to the backend and its CORS headers are not passed back.
 */
import { serviceUnavailable } from '../machinery/status-error.js'
import type { RequestHeaderOptions } from '../authn/authentication-options.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { UserInfo } from '../machinery/object.js'
import type { ApiService, ServiceReference } from './apiservice.js'
import { identityHeaderLines, identityHeaderNames, stripIdentity } from './identity-headers.js'
import type { ServiceLocation } from './service-location.js'
import { appendForwardedFor, proxiedAnswer } from '../proxy/proxied-answer.js'

export interface ProxyDeps {
  transport: ProxyTransport
  locate: (ref: ServiceReference) => Promise<ServiceLocation>
  /** PEM pair from `--proxy-client-cert-file` and `--proxy-client-key-file`. */
  clientCertificate?: { certificate: string; key: string }
  requestHeader?: RequestHeaderOptions
  rejectForwardingRedirect: boolean
}

/** How long connecting to an extension server may take (upstream's dialer default). */
const DIAL_TIMEOUT_MS = 30_000

export const REDIRECT_REFUSED = 'the backend attempted to redirect this request, which is not permitted'

export function aggregatorProxy(
  deps: ProxyDeps,
): (request: Request, api: ApiService, user: UserInfo, deadline?: AbortSignal, remoteAddress?: string) => Promise<Response> {
  const names = identityHeaderNames(deps.requestHeader)
  return async (request, api, user, deadline, remoteAddress) => {
    const service = api.service
    if (!service || !api.available) throw serviceUnavailable('service unavailable')
    const location = await deps.locate(service).catch(() => {
      throw serviceUnavailable('service unavailable')
    })
    const headers = new Headers(request.headers)
    stripIdentity(headers, deps.requestHeader, names)
    const url = new URL(request.url)
    // As upstream's proxy transport, given the backend's location: the path asked for, where it went, and who asked.
    const backend = new URL(location.origin)
    headers.set('x-forwarded-uri', url.pathname)
    headers.set('x-forwarded-host', backend.host)
    headers.set('x-forwarded-proto', 'https')
    appendForwardedFor(headers, remoteAddress)
    let response: Response
    try {
      response = await deps.transport.roundTrip(
        {
          origin: location.origin,
          serverName: location.serverName,
          ...(api.caBundle ? { caBundle: api.caBundle } : {}),
          ...(api.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
          ...(deps.clientCertificate ? { clientCertificate: deps.clientCertificate } : {}),
          dialTimeoutMs: DIAL_TIMEOUT_MS,
          egress: 'cluster',
        },
        {
          method: request.method,
          path: url.pathname + url.search,
          headers,
          headerLines: identityHeaderLines(user, names),
          body: request.body,
          signal: deadline ? AbortSignal.any([request.signal, deadline]) : request.signal,
        },
      )
    } catch (err) {
      throw serviceUnavailable(err instanceof Error ? err.message : String(err))
    }
    if (deps.rejectForwardingRedirect && response.status >= 300 && response.status <= 399 && response.headers.get('location')) {
      await response.body?.cancel().catch(() => {})
      // Upstream's proxy replaces the backend's answer with this text alone (no Status), which Go's server sends as plain text.
      return new Response(REDIRECT_REFUSED, { status: 502, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    }
    // The extension server's CORS headers are dropped; a redirect it may send (the refusal turned off) names its own
    // origin, as upstream's transport, which was given the backend's location, writes it.
    return proxiedAnswer(response, { proxyPrefix: '', backendHost: backend.host, requestHost: url.host, transportOrigin: `https://${backend.host}` })
  }
}
