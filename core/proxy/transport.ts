/**
 * The port through which the server forwards a request it does not answer
 * itself (an aggregated API server's group/version): the request streams
 * out, the answer streams back as it arrives, redirects are not followed.
 * The runtime supplies the real client (`runtimes/node/daemon/proxy-transport.ts`),
 * which trusts a given CA and presents a client certificate; `fetchProxyTransport`
 * serves where neither is needed.
 */
import type { EgressSelectionName } from '../config/egress-selector.js'

/**
 * The URL a forwarded request is sent to: the target's origin, whatever the
 * path holds. The path and query are set on it, never resolved against it:
 * resolved, a path such as `//127.0.0.1:6443/x` names a host of its own.
 */
export function forwardedUrl(origin: string, pathAndQuery: string): URL {
  const url = new URL(origin)
  const query = pathAndQuery.indexOf('?')
  url.pathname = query < 0 ? pathAndQuery : pathAndQuery.slice(0, query)
  url.search = query < 0 ? '' : pathAndQuery.slice(query)
  return url
}

/** Where a forwarded request goes and how the connection is secured. */
export interface ProxyTarget {
  /** `https://host:port` (or `http:`) of the backend; the request's path and query are appended. */
  origin: string
  /** The name the serving certificate must carry (`<service>.<namespace>.svc`), which the origin's host may not be. */
  serverName?: string
  /** Base64 of the PEM CA bundle that alone is trusted (an APIService's caBundle); absent: the runtime's own CAs. */
  caBundle?: string
  /** Accept any serving certificate (an APIService's insecureSkipTLSVerify). */
  insecureSkipTLSVerify?: boolean
  /** A client certificate and its key (PEM) to present (`--proxy-client-cert-file`). */
  clientCertificate?: { certificate: string; key: string }
  /** How long connecting may take before the call fails. */
  dialTimeoutMs?: number
  /**
   * The egress selection the connection belongs to (`--egress-selector-config-file`):
   * its proxy, when it has one, carries the connection. Absent: dialled directly.
   */
  egress?: EgressSelectionName
}

export interface ForwardedRequest {
  method: string
  /** Path and query, as they are to be sent. */
  path: string
  headers: Headers
  body: ReadableStream<Uint8Array> | null
  /**
   * Header lines sent each on a line of its own after `headers` (one group
   * per `X-Remote-Group` line, as Go's request-header authenticator reads
   * them; `Headers` would join them with commas).
   */
  headerLines?: readonly (readonly [string, string])[]
  /** Ends the call (the client went away, the deadline passed). */
  signal?: AbortSignal
}

export interface ProxyTransport {
  /**
   * Sends `request` to `target` and answers the backend's response with a
   * streaming body; a 3xx is handed back, not followed. Rejects with an Error
   * worded as Go's client words it when the backend cannot be reached or
   * its certificate is not trusted.
   */
  roundTrip(target: ProxyTarget, request: ForwardedRequest): Promise<Response>
  /**
   * What a simulated node's agent plays on an exec or attach stream to
   * `target` (path and query as sent): present only where such nodes answer
   * in process, undefined for every real backend. Throws a Status for a
   * stream the simulation does not play (port-forwarding).
   */
  simulatedStream?(target: ProxyTarget, path: string): SimulatedStream | undefined
  /** Whether calls to `target` are answered in process (a simulated node's agent), with no network reached. */
  answersInProcess?(target: ProxyTarget): boolean
}

/** An exec or attach stream that no agent is dialled for: the runtime upgrades the client's connection and plays it. */
export interface SimulatedStream {
  /** Written on the stdout channel. */
  stdout: string
  /** Reported on the error channel as the command's end. */
  exitCode: number
}

/**
 * Headers that belong to one connection (RFC 9110 7.6.1) and never pass a
 * proxy, in either direction.
 */
export const HOP_BY_HOP_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'host',
]

/** A copy of `headers` without the hop-by-hop ones, including those `Connection` names. */
export function endToEndHeaders(headers: Headers): Headers {
  const clean = new Headers(headers)
  for (const token of (headers.get('connection') ?? '').split(',')) {
    const name = token.trim()
    if (name) clean.delete(name)
  }
  for (const name of HOP_BY_HOP_HEADERS) clean.delete(name)
  return clean
}

/**
 * A transport over the Web `fetch`: plain HTTP, or HTTPS trusted by the
 * platform's CAs. Refuses a target with a CA bundle, a client certificate or
 * insecureSkipTLSVerify, which `fetch` cannot be told to honour: a runtime
 * that proxies to aggregated API servers gives a transport that can.
 */
export function fetchProxyTransport(fetchImpl: typeof fetch = fetch): ProxyTransport {
  return {
    async roundTrip(target, request) {
      if (target.caBundle || target.clientCertificate || target.insecureSkipTLSVerify) {
        throw new Error('this runtime cannot trust a caBundle or present a client certificate when proxying')
      }
      if (request.headerLines?.length) throw new Error('this runtime cannot send repeated header lines when proxying')
      const init: RequestInit & { duplex?: 'half' } = {
        method: request.method,
        headers: endToEndHeaders(request.headers),
        redirect: 'manual',
        ...(request.signal ? { signal: request.signal } : {}),
      }
      if (request.body && request.method !== 'GET' && request.method !== 'HEAD') {
        init.body = request.body
        init.duplex = 'half'
      }
      try {
        return await fetchImpl(forwardedUrl(target.origin, request.path), init)
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause
        throw new Error(cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err))
      }
    },
  }
}
