/**
 * What core is told of a connection on each of its requests, its client
 * certificate above all. Upstream's listener only asks for the certificate
 * and its authenticators verify the chain on every request, against the CA
 * bundles of the moment: a certificate that has expired, or whose CA is no
 * longer trusted, stops authenticating on the connection's next request.
 * Here the handshake verifies the chain against both bundles (OpenSSL's full
 * checks), and client-cas.ts verifies it again against each bundle alone;
 * that second verdict is kept for the connection until the bundles change
 * or a certificate it relied on expires, so that a GET on an open
 * connection costs a comparison, not a chain verification.
 *
 * A certificate the handshake refused stays refused on its connection, even
 * after a reload that would trust it: there is no verifying it again with
 * OpenSSL's checks, and the client's next connection is verified afresh.
 */
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls'
import type { ClientCertificate, ConnectionInfo } from '../../../core/ports.js'
import { type ChainVerdict, type ClientCAs, type PresentedChain, presentedChain } from './client-cas.js'

/** A TLS socket, or the proxy HTTP/2 gives for the session's socket. */
export type TlsLike = Pick<TLSSocket, 'authorized' | 'authorizationError' | 'remoteAddress'> & {
  getPeerCertificate(detailed: true): DetailedPeerCertificate
}

/** The connection's record for a request at `now` (ms since the epoch), with `cas` the bundles trusted then; undefined: no client certificate is requested. */
export type ConnectionInfoAt = (cas: ClientCAs | undefined, now: number) => ConnectionInfo

/** What the handshake left of a client certificate: read once, while the socket is open. */
interface Presented {
  chain: PresentedChain
  commonName: string
  organizations: string[]
  /** The handshake's own verification (OpenSSL's, against both bundles) passed. */
  handshakeVerified: boolean
  /** Why it failed, as OpenSSL names it. */
  handshakeError?: string
}

/** Node gives an RDN attribute as a string, or an array when it repeats. */
function values(value: string | string[] | undefined): string[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

function presentedBy(socket: TlsLike): Presented | undefined {
  // An empty object when the client sent no certificate.
  const peer: Partial<DetailedPeerCertificate> = socket.getPeerCertificate(true)
  if (!peer.raw) return undefined
  const subject = peer.subject as Record<string, string | string[] | undefined> | undefined
  return {
    chain: presentedChain(peer as DetailedPeerCertificate),
    // Go's pkix.Name keeps the last CN when several are present.
    commonName: values(subject?.CN).at(-1) ?? '',
    organizations: values(subject?.O),
    handshakeVerified: socket.authorized,
    ...(!socket.authorized && socket.authorizationError ? { handshakeError: String(socket.authorizationError) } : {}),
  }
}

function certificateOf(presented: Presented, verdict: ChainVerdict): ClientCertificate {
  const cert: ClientCertificate = { verified: verdict.clientCA, commonName: presented.commonName, organizations: presented.organizations }
  if (verdict.requestHeaderCA) cert.verifiedByRequestHeaderCA = true
  if (presented.handshakeError) cert.verifyError = presented.handshakeError
  else if (verdict.leafInvalid) cert.verifyError = verdict.leafInvalid
  else if (!verdict.clientCA) cert.verifyError = 'signed by a CA other than the client CA'
  return cert
}

const REFUSED: ChainVerdict = { clientCA: false, requestHeaderCA: false, holdsUntil: Infinity }

/**
 * The record source of one connection (an HTTP/1.1 socket, an HTTP/2
 * session). `fixed` holds what does not change with time (protocol, header
 * bound); the certificate's verdict is reached again when `cas` is another
 * bundle pair than the one it was reached with, or its time has passed.
 */
export function connectionInfoAt(socket: TlsLike, fixed: ConnectionInfo): ConnectionInfoAt {
  const base: ConnectionInfo = { ...fixed, ...(socket.remoteAddress ? { remoteAddress: socket.remoteAddress } : {}) }
  // Read on the first request that asks: null, no certificate was sent.
  let presented: Presented | null | undefined
  let info = base
  let verifiedWith: ClientCAs | undefined | null = null
  let holdsUntil = -Infinity
  return (cas, now) => {
    if (cas === verifiedWith && now <= holdsUntil) return info
    verifiedWith = cas
    if (!cas) {
      holdsUntil = Infinity
      return (info = base)
    }
    if (presented === undefined) presented = presentedBy(socket) ?? null
    if (!presented) {
      holdsUntil = Infinity
      return (info = base)
    }
    const verdict = !presented.handshakeVerified ? REFUSED : cas.verify(presented.chain, now)
    holdsUntil = verdict.holdsUntil
    return (info = { ...base, clientCertificate: certificateOf(presented, verdict) })
  }
}
