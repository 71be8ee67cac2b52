/**
 * How a server talks to a peer (upstream's peer proxy transport): HTTPS to
 * the peer's advertised `host:port`, its serving certificate verified
 * against `--peer-ca-file` under the name `kubernetes.default.svc`, the
 * proxy client certificate presented, and the caller's identity in
 * upstream's X-Remote-* headers (what an auth-proxy round tripper sends),
 * with whatever identity or credential the caller sent removed. The peer
 * believes those headers only because of the client certificate, as an
 * extension server believes the aggregator's.
 */
import { identityHeaderLines, identityHeaderNames, stripIdentity } from '../aggregator/identity-headers.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { UserInfo } from '../machinery/object.js'

/** Set on a request a peer forwarded: it is answered where it lands, never forwarded again. */
export const PEER_PROXIED_HEADER = 'x-kubernetes-peer-proxied'

/** The name peers' serving certificates are checked against (upstream's). */
export const PEER_SERVER_NAME = 'kubernetes.default.svc'

export interface PeerTlsSettings {
  /** PEM bundle of `--peer-ca-file`; absent: the runtime's own CAs. */
  caBundle?: string
  /** `--proxy-client-cert-file` and `--proxy-client-key-file`, PEM. */
  clientCertificate: { certificate: string; key: string }
}

export interface PeerRequest {
  method: string
  /** Path and query. */
  path: string
  headers: Headers
  body: ReadableStream<Uint8Array> | null
  signal?: AbortSignal
}

/** How long connecting to a peer may take. */
const DIAL_TIMEOUT_MS = 30_000

export type PeerForward = (hostPort: string, request: PeerRequest, user: UserInfo) => Promise<Response>

export function peerForwarder(transport: ProxyTransport, tls: PeerTlsSettings): PeerForward {
  const names = identityHeaderNames(undefined)
  const caBundle = tls.caBundle ? btoa(tls.caBundle) : undefined
  return (hostPort, request, user) => {
    const headers = new Headers(request.headers)
    stripIdentity(headers, undefined, names)
    headers.set(PEER_PROXIED_HEADER, 'true')
    return transport.roundTrip(
      {
        origin: `https://${hostPort}`,
        serverName: PEER_SERVER_NAME,
        ...(caBundle ? { caBundle } : {}),
        clientCertificate: tls.clientCertificate,
        dialTimeoutMs: DIAL_TIMEOUT_MS,
      },
      {
        method: request.method,
        path: request.path,
        headers,
        headerLines: identityHeaderLines(user, names),
        body: request.body,
        ...(request.signal ? { signal: request.signal } : {}),
      },
    )
  }
}
