/**
 * A small HTTP CONNECT proxy for the egress tests, started on loopback:
 * over TLS that requires a client certificate its client CA signed (the
 * server's egress `tlsConfig`), or on a unix socket. It records every
 * CONNECT target and the client certificate's common name, then joins the
 * caller to the target, or answers 403 for a target it is told to refuse.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { connect, type AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { TLSSocket } from 'node:tls'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'

export interface ConnectRecord {
  target: string
  clientCommonName?: string
}

export interface ConnectProxy {
  /** `https://127.0.0.1:<port>` for a TLS proxy; the socket path for a unix one. */
  address: string
  /** PEM of the CA that signed the proxy's serving certificate (the egress caBundle). */
  servingCA?: string
  connects: ConnectRecord[]
  /** Targets answered with 403 instead of being joined. */
  refused: Set<string>
  close(): Promise<void>
}

function onConnect(proxy: ConnectProxy, open: Set<Duplex>) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const target = req.url ?? ''
    const peer = (socket as TLSSocket).getPeerCertificate?.()
    proxy.connects.push({ target, ...(peer?.subject?.CN ? { clientCommonName: String(peer.subject.CN) } : {}) })
    open.add(socket)
    socket.once('close', () => open.delete(socket))
    socket.on('error', () => socket.destroy())
    if (proxy.refused.has(target)) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n')
      return
    }
    const at = target.lastIndexOf(':')
    const upstream = connect({ host: target.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(target.slice(at + 1)) }, () => {
      socket.write('HTTP/1.1 200 Connection established\r\n\r\n')
      if (head.length) upstream.write(head)
      socket.pipe(upstream)
      upstream.pipe(socket)
    })
    open.add(upstream)
    upstream.once('close', () => {
      open.delete(upstream)
      socket.destroy()
    })
    upstream.on('error', () => socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n'))
    socket.once('close', () => upstream.destroy())
  }
}

function closer(server: Server, open: Set<Duplex>): () => Promise<void> {
  let closed: Promise<void> | undefined
  return () =>
    (closed ??= new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy()
      server.closeAllConnections()
      server.close(() => resolve())
    }))
}

/** A proxy over TLS on 127.0.0.1 that accepts only client certificates `clientCA` signed. */
export async function startTlsConnectProxy(clientCA: string): Promise<ConnectProxy> {
  const ca = await createCertificateAuthority({ commonName: 'connect-proxy-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'connect-proxy', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  const server = createHttpsServer({ cert: serving.certificate, key: serving.privateKey, ca: clientCA, requestCert: true, rejectUnauthorized: true })
  const open = new Set<Duplex>()
  const proxy: ConnectProxy = { address: '', servingCA: ca.certificate, connects: [], refused: new Set(), close: closer(server, open) }
  server.on('connect', onConnect(proxy, open))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return proxy
}

/** A proxy on a unix socket at `path`. */
export async function startUnixConnectProxy(path: string): Promise<ConnectProxy> {
  const server = createHttpServer()
  const open = new Set<Duplex>()
  const proxy: ConnectProxy = { address: path, connects: [], refused: new Set(), close: closer(server, open) }
  server.on('connect', onConnect(proxy, open))
  await new Promise<void>((resolve) => server.listen(path, resolve))
  return proxy
}
