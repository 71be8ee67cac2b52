/**
 * Egress selection in the Node runtime: for a selection configured with
 * HTTPConnect, every connection the server opens for that selection is a
 * tunnel: the proxy is dialled (TCP, with TLS and the configured client pair
 * for an https:// URL, or a unix socket), asked `CONNECT host:port`, and the
 * connection it hands back after a 200 carries the server's own TLS to the
 * target. Nothing falls back to a direct connection: a proxy that cannot be
 * reached or refuses fails the call with the proxy's words, as upstream's
 * dialer words them.
 */
import { readFile } from 'node:fs/promises'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import type { EgressProxy, EgressSelectionName } from '../../../core/config/egress-selector.js'

/**
 * Opens a connection to `host:port` through a proxy; resolves once the proxy
 * accepted the dial. `close` drops what the dialer keeps open between dials
 * (konnectivity's gRPC channel); a later dial opens it again.
 */
export type TunnelDialer = ((host: string, port: number) => Promise<Socket>) & { close?: () => void }

/** The dialer of each selection that goes through a proxy; a selection not here is dialled directly. */
export type EgressDialers = ReadonlyMap<EgressSelectionName, TunnelDialer>

/** A proxy's answer head larger than this is refused (a CONNECT answer is a few lines). */
const MAX_ANSWER_HEAD_BYTES = 16 * 1024

/**
 * How long a proxy may take to answer a dial before its connection is
 * closed: the backstop of upstream's konnectivity client, also the longest
 * deadline of a call dialled through a proxy. A call gives up at its own
 * deadline; without this the connection to a proxy that never answers was
 * kept open for good, one for every call.
 */
export const PROXY_DIAL_BACKSTOP_MS = 30_000

/** `host:port`, with brackets around an IPv6 address, as a CONNECT request names its target. */
function authority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/**
 * Sends CONNECT on an open connection to the proxy and resolves with the
 * same connection once the proxy answered 200 and sent nothing more (the
 * server speaks first on the tunnel, as TLS does).
 */
function tunnel(proxyConn: Socket, proxyName: string, target: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0)
    const backstop = setTimeout(() => fail(`reading HTTP response from CONNECT to ${target} via proxy ${proxyName} failed: i/o timeout`), PROXY_DIAL_BACKSTOP_MS).unref()
    const fail = (message: string): void => {
      cleanup()
      proxyConn.destroy()
      reject(new Error(message))
    }
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) {
        if (head.length > MAX_ANSWER_HEAD_BYTES) fail(`reading HTTP response from CONNECT to ${target} via proxy ${proxyName} failed: answer head too large`)
        return
      }
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1')
      const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine)
      if (!match) return fail(`reading HTTP response from CONNECT to ${target} via proxy ${proxyName} failed: malformed HTTP response ${JSON.stringify(statusLine)}`)
      const code = Number(match[1])
      if (code !== 200) return fail(`proxy error from ${proxyName} while dialing ${target}, code ${code}: ${code} ${match[2] ?? ''}`.trimEnd())
      const extra = head.length - (end + 4)
      if (extra > 0) return fail(`unexpected ${extra} bytes of buffered data from CONNECT proxy ${JSON.stringify(proxyName)}`)
      cleanup()
      proxyConn.pause()
      // From here the TLS client on top sees the tunnel end; an error below it only closes it.
      proxyConn.on('error', () => proxyConn.destroy())
      resolve(proxyConn)
    }
    const onError = (err: Error): void => fail(`reading HTTP response from CONNECT to ${target} via proxy ${proxyName} failed: ${err.message}`)
    const onClose = (): void => fail(`reading HTTP response from CONNECT to ${target} via proxy ${proxyName} failed: unexpected EOF`)
    const cleanup = (): void => {
      clearTimeout(backstop)
      proxyConn.off('data', onData)
      proxyConn.off('error', onError)
      proxyConn.off('close', onClose)
    }
    proxyConn.on('data', onData)
    proxyConn.once('error', onError)
    proxyConn.once('close', onClose)
    proxyConn.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
  })
}

/** Opens the connection to the proxy itself; rejects as `dialing proxy "<address>" failed: <reason>`. */
function dialProxy(open: () => Socket, readyEvent: 'connect' | 'secureConnect', proxyName: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = open()
    const onError = (err: Error): void => reject(new Error(`dialing proxy ${JSON.stringify(proxyName)} failed: ${err.message}`))
    socket.once('error', onError)
    socket.once(readyEvent, () => {
      socket.off('error', onError)
      resolve(socket)
    })
  })
}

async function readPem(file: string, what: string): Promise<string> {
  return readFile(file, 'utf8').catch((err: Error) => {
    throw new Error(`--egress-selector-config-file: cannot read the ${what} ${file}: ${err.message}`)
  })
}

/** The dialer for one proxy (HTTP CONNECT, or konnectivity's gRPC); reads its TLS files now, so that a missing one stops start-up. */
export async function proxyDialer(proxy: EgressProxy): Promise<TunnelDialer> {
  // The gRPC client and its .proto loader load only for a konnectivity proxy: most daemons never use them.
  if (proxy.kind === 'grpc') return (await import('./konnectivity-dialer.js')).konnectivityDialer(proxy.socketPath)
  if (proxy.kind === 'uds') {
    const path = proxy.socketPath
    return async (host, port) => tunnel(await dialProxy(() => netConnect({ path }), 'connect', path), path, authority(host, port))
  }
  const url = new URL(proxy.url)
  const proxyHost = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const secure = url.protocol === 'https:'
  const proxyPort = Number(url.port || (secure ? 443 : 80))
  const proxyName = url.host
  if (!secure) return async (host, port) => tunnel(await dialProxy(() => netConnect({ host: proxyHost, port: proxyPort }), 'connect', proxyName), proxyName, authority(host, port))
  const tls = proxy.tls!
  const cert = await readPem(tls.clientCertFile, 'proxy client certificate')
  const key = await readPem(tls.clientKeyFile, 'proxy client key')
  // Without a caBundle the platform's CAs verify the proxy, as upstream uses the host's roots.
  const ca = tls.caBundleFile ? await readPem(tls.caBundleFile, 'proxy CA bundle') : undefined
  const serverName = /^[\d.]+$|:/.test(proxyHost) ? undefined : proxyHost
  const open = (): Socket => tlsConnect({ host: proxyHost, port: proxyPort, cert, key, ...(ca ? { ca } : {}), ...(serverName ? { servername: serverName } : {}) })
  return async (host, port) => tunnel(await dialProxy(open, 'secureConnect', proxyName), proxyName, authority(host, port))
}

/** Closes what the dialers keep open, at shutdown. */
export function closeEgressDialers(dialers: EgressDialers | undefined): void {
  for (const dial of dialers?.values() ?? []) dial.close?.()
}

/** The dialers of a configuration's selections that go through a proxy. */
export async function egressDialers(proxies: ReadonlyMap<EgressSelectionName, EgressProxy>): Promise<EgressDialers> {
  const dialers = new Map<EgressSelectionName, TunnelDialer>()
  for (const [name, proxy] of proxies) dialers.set(name, await proxyDialer(proxy))
  return dialers
}
