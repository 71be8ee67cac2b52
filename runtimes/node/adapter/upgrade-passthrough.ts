/**
 * HTTP/1.1 upgrades (exec, attach, port-forward) on the daemon's listener:
 * the upgrade request goes through core like any other (authentication,
 * authorization, audit); when core hands the connection over, the backend
 * is dialled with the target's TLS (its CA, the client certificate, the
 * dial time-out), sent the request, and from then on bytes are copied both
 * ways with `pipe`, which pauses a side whose peer is not reading, so a
 * stream holds a few chunks however fast either end sends. A backend's 101
 * reaches the client and the two are joined; an error (400 and up) reaches
 * the client as it is and both connections are then closed, never joined
 * (upstream's fix of CVE-2018-1002105: a backend that refused the upgrade
 * but kept its connection would take whatever the client sent next, with
 * the server's credentials); any other answer is refused with upstream's
 * 500 "invalid upgrade response". Otherwise
 * core's answer is written on the socket and the connection closed. With
 * `--max-connection-bytes-per-sec`, each direction passes through its own
 * byte throttle (core/proxy/byte-throttle.ts). A target of an egress
 * selection with a proxy is reached through a tunnel the proxy opens, and
 * its TLS is spoken inside that tunnel.
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { type Duplex, Transform } from 'node:stream'
import { statusResponse } from '../../../core/http/respond.js'
import { StatusError, type StatusReason } from '../../../core/machinery/status-error.js'
import type { ConnectionInfo } from '../../../core/ports.js'
import type { UpgradeHandoff } from '../../../core/proxy/upgrade.js'
import { ByteThrottle } from '../../../core/proxy/byte-throttle.js'
import type { EgressDialers } from './egress-dialer.js'
import { decodeCABundle, connectionFailureReason } from './tls-errors.js'
import { playSimulatedStream } from './simulated-stream.js'
import { dotSegmentMessage, dotSegmentOf } from './dot-segments.js'
import { hasMalformedEscape, malformedRequestResponse } from './malformed-escapes.js'

export interface UpgradeServer {
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>
}

/**
 * The URL of an upgrade request, from its request line as the listener's
 * other requests read it: the path is the request line's, and a Host header
 * that is no host (`x/api/v1/secrets?`) is refused instead of read as part
 * of the URL (a front proxy that judged the request line would be bypassed),
 * and so is a path with a dot segment (dot-segments.ts) or a backslash,
 * which the URL standard reads as a slash: `/api/v1/namespaces/a/..\..\namespaces/b/pods`
 * became b's pods. The listener's other requests are refused alike (the
 * adapter's "Backslash in request path").
 */
function requestUrl(req: IncomingMessage): string {
  const target = req.url ?? ''
  const path = target.replace(/^https?:\/\/[^/]*/, '')
  const dot = dotSegmentOf(path)
  if (dot !== undefined) throw new Error(dotSegmentMessage(dot))
  const query = path.indexOf('?')
  if ((query < 0 ? path : path.slice(0, query)).includes('\\')) throw new Error('Backslash in request path')
  if (/^https?:\/\//.test(target)) return new URL(target).href
  if (!target.startsWith('/')) throw new Error('Invalid URL')
  const host = req.headers.host ?? 'localhost'
  const url = new URL(`https://${host}${target}`)
  const hostname = host.replace(/:\d+$/, '').toLowerCase()
  if (url.host !== host.toLowerCase() && url.hostname !== hostname) throw new Error('Invalid host header')
  return url.href
}

/** The incoming upgrade request as a Web Request (no body: an upgrade carries none), aborted once the client goes. */
function toRequest(req: IncomingMessage, socket: Duplex): Request {
  const headers = new Headers()
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  const gone = new AbortController()
  socket.once('close', () => gone.abort())
  return new Request(requestUrl(req), { method: req.method ?? 'GET', headers, signal: gone.signal })
}

/**
 * Writes a Web Response on a raw socket as HTTP/1.1 and closes it. The body
 * streams as it comes (a watch, a proxied download), delimited by the close,
 * each piece written once the socket took the one before; a client that
 * goes cancels the rest.
 */
async function writeResponse(socket: Duplex, response: Response): Promise<void> {
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText || STATUS_CODES[response.status] || 'Unknown'}`]
  for (const [name, value] of response.headers) {
    if (['connection', 'transfer-encoding', 'content-length', 'keep-alive', 'upgrade'].includes(name)) continue
    lines.push(`${name}: ${value}`)
  }
  lines.push('connection: close', '', '')
  socket.write(Buffer.from(lines.join('\r\n'), 'latin1'))
  const reader = response.body?.getReader()
  if (!reader) {
    socket.end()
    return
  }
  const cancel = (): void => void reader.cancel().catch(() => {})
  socket.once('close', cancel)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || socket.destroyed) break
      if (!socket.write(value)) await new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('drain', resolve).once('close', resolve)))
    }
  } catch {
    // The body failed (its source went away): the close below tells the client it ended early.
  } finally {
    socket.off('close', cancel)
  }
  if (socket.destroyed) cancel()
  else socket.end()
}

/** The request head sent to the backend. */
function requestHead(handoff: UpgradeHandoff, host: string): Buffer {
  const lines = [`${handoff.request.method} ${handoff.request.path} HTTP/1.1`, `Host: ${host}`]
  for (const [name, value] of handoff.request.headers) lines.push(`${name}: ${value}`)
  for (const [name, value] of handoff.request.headerLines ?? []) lines.push(`${name}: ${value}`)
  lines.push('', '')
  return Buffer.from(lines.join('\r\n'), 'latin1')
}

/** The tunnel, or a time-out error once the dial time has passed (the tunnel is closed if it comes later). */
function withDialTimeout(dialling: Promise<Socket>, timeoutMs: number | undefined, hostPort: string): Promise<Socket> {
  if (!timeoutMs) return dialling
  return new Promise((resolve, reject) => {
    let late = false
    const timer = setTimeout(() => {
      late = true
      reject(new Error(`dial tcp ${hostPort}: i/o timeout`))
    }, timeoutMs)
    dialling.then(
      (socket) => {
        clearTimeout(timer)
        if (late) socket.destroy()
        else resolve(socket)
      },
      (err: unknown) => {
        clearTimeout(timer)
        reject(err instanceof Error ? err : new Error(String(err)))
      },
    )
  })
}

/** Dials the target as its settings say; resolves once connected (TLS verified), rejects worded as Go's dialer. */
export async function dialTarget(handoff: UpgradeHandoff, dialers?: EgressDialers): Promise<Socket> {
  const { target } = handoff
  const url = new URL(target.origin)
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const viaProxy = target.egress ? dialers?.get(target.egress) : undefined
  let tunnel: Socket | undefined
  if (viaProxy) {
    tunnel = await withDialTimeout(viaProxy(host, port), target.dialTimeoutMs, url.host)
    if (url.protocol !== 'https:') return tunnel.resume()
  }
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:'
    const socket: Socket = secure
      ? tlsConnect({
          ...(tunnel ? { socket: tunnel } : {}),
          host,
          port,
          ...(target.serverName ? { servername: target.serverName } : /^[\d.]+$|:/.test(host) ? {} : { servername: host }),
          ...(target.caBundle ? { ca: decodeCABundle(target.caBundle) } : {}),
          ...(target.clientCertificate ? { cert: target.clientCertificate.certificate, key: target.clientCertificate.key } : {}),
          rejectUnauthorized: !target.insecureSkipTLSVerify,
          ALPNProtocols: ['http/1.1'],
        })
      : netConnect({ host, port })
    const timer = target.dialTimeoutMs
      ? setTimeout(() => socket.destroy(Object.assign(new Error(`dial tcp ${url.host}: i/o timeout`), { code: 'ETIMEDOUT' })), target.dialTimeoutMs)
      : undefined
    const fail = (err: Error): void => {
      clearTimeout(timer)
      reject(new Error(connectionFailureReason(err, url)))
    }
    socket.once('error', fail)
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer)
      socket.off('error', fail)
      resolve(socket)
    })
  })
}

/**
 * A pass-through that lets bytes out at the throttle's rate. Transform holds
 * back the next chunk until this one is pushed and its output is read, so
 * at most a chunk or two wait here however fast the sender writes.
 */
export function throttleTransform(throttle: ByteThrottle): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      void (async () => {
        for await (const piece of throttle.pace(chunk)) {
          // A closed stream stops pacing at once rather than waiting out the rest of the chunk.
          if (this.destroyed) return
          this.push(piece)
        }
      })().then(() => done(), done)
    },
  })
}

/** More than any backend's answer head holds. */
const MAX_RESPONSE_HEAD_BYTES = 64 * 1024

/**
 * The backend's answer up to the end of its head, with whatever came after
 * it in the same reads; the backend is left paused. Rejects in the words of
 * Go's response reader when it closes first, and when the client goes.
 */
function readResponseHead(backend: Socket, client: Duplex): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0)
    const finish = (result: Buffer | Error): void => {
      backend.pause()
      backend.off('data', onData)
      backend.off('close', onClose)
      backend.off('error', onClose)
      client.off('close', onClientGone)
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onData = (chunk: Buffer): void => {
      got = Buffer.concat([got, chunk])
      if (got.includes('\r\n\r\n')) finish(got)
      else if (got.length > MAX_RESPONSE_HEAD_BYTES) finish(new Error('net/http: response header too long'))
    }
    const onClose = (): void => finish(new Error(got.length ? 'unexpected EOF' : 'EOF'))
    const onClientGone = (): void => finish(new Error('the client went away'))
    backend.on('data', onData)
    backend.once('close', onClose)
    backend.once('error', onClose)
    client.once('close', onClientGone)
  })
}

/**
 * Sends the request head, reads the backend's answer head and, for a 101 or
 * an error (400 and up), passes it to the client and joins the two; any
 * other answer is refused as upstream's upgrade proxy refuses it, rather
 * than spliced to a client expecting a stream.
 */
async function upgradeThrough(client: Duplex, backend: Socket, head: Buffer, firstBytes: Buffer, maxBytesPerSec: number): Promise<void> {
  backend.write(head)
  let answer: Buffer
  try {
    answer = await readResponseHead(backend, client)
  } catch (err) {
    backend.destroy()
    if (client.destroyed) return
    return writeResponse(client, statusResponse(new StatusError(500, '' as StatusReason, err instanceof Error ? err.message : String(err))))
  }
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.toString('latin1', 0, 16))?.[1]
  const code = status === undefined ? undefined : Number(status)
  if (code === undefined || (code !== 101 && code < 400)) {
    backend.destroy()
    const line = answer.toString('latin1', 0, answer.indexOf('\r\n'))
    const reason = code === undefined ? `malformed HTTP response ${JSON.stringify(line)}` : `invalid upgrade response: status code ${code}`
    return writeResponse(client, statusResponse(new StatusError(500, '' as StatusReason, reason)))
  }
  if (code !== 101) return echoAndClose(client, backend, answer)
  client.write(answer)
  splice(client, backend, firstBytes, maxBytesPerSec)
}

/** How long a refused upgrade's answer may take to arrive whole (upstream's deadline for it). */
const ERROR_ANSWER_DEADLINE_MS = 10_000
/** The most of a refused upgrade's answer body passed on. */
const MAX_ERROR_BODY_BYTES = 1024 * 1024
/** How long the client's connection stays half-open after the answer, so that it reads it before the close. */
const CLOSE_LINGER_MS = 500

/**
 * Passes a backend's refusal of an upgrade on, its head and its body (as
 * long as its Content-Length says, to the end of its chunks, or until it
 * closes), and closes both connections: nothing the client sends reaches
 * the backend, which is left holding the server's credentials only for the
 * request that was authorized.
 */
function echoAndClose(client: Duplex, backend: Socket, answer: Buffer): void {
  const headEnd = answer.indexOf('\r\n\r\n') + 4
  const head = answer.toString('latin1', 0, headEnd)
  const length = /\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n/i.exec(head)
  const chunked = /\r\ntransfer-encoding:[^\r\n]*chunked/i.test(head)
  let left = length ? Math.min(Number(length[1]), MAX_ERROR_BODY_BYTES) : MAX_ERROR_BODY_BYTES
  let tail = ''
  let closed = false
  const close = (): void => {
    if (closed) return
    closed = true
    clearTimeout(deadline)
    backend.destroy()
    client.end()
    setTimeout(() => client.destroy(), CLOSE_LINGER_MS).unref()
  }
  const deadline = setTimeout(close, ERROR_ANSWER_DEADLINE_MS)
  deadline.unref()
  const pass = (chunk: Buffer): void => {
    if (closed) return
    const piece = chunk.subarray(0, left)
    left -= piece.length
    if (piece.length) client.write(piece)
    tail = (tail + piece.toString('latin1')).slice(-5)
    // The body is whole at its length, at the last chunk's end, or at the bound on what is passed on.
    if (left === 0 || (chunked && tail === '0\r\n\r\n')) close()
  }
  // The client's own bytes are read and dropped: none is sent on.
  client.on('data', () => {})
  client.once('close', close)
  client.once('error', close)
  client.write(answer.subarray(0, headEnd))
  pass(answer.subarray(headEnd))
  backend.on('data', pass)
  backend.once('end', close)
  backend.once('close', close)
  backend.once('error', close)
  backend.resume()
}

/** Joins the client and the backend: bytes both ways until either side ends. */
function splice(client: Duplex, backend: Socket, firstBytes: Buffer, maxBytesPerSec: number): void {
  const up = maxBytesPerSec > 0 ? throttleTransform(new ByteThrottle(maxBytesPerSec)) : undefined
  const down = maxBytesPerSec > 0 ? throttleTransform(new ByteThrottle(maxBytesPerSec)) : undefined
  if (up) {
    if (firstBytes.length) up.write(firstBytes)
    client.pipe(up).pipe(backend)
  } else {
    if (firstBytes.length) backend.write(firstBytes)
    client.pipe(backend)
  }
  if (down) backend.pipe(down).pipe(client)
  else backend.pipe(client)
  const end = (): void => {
    client.destroy()
    backend.destroy()
    up?.destroy()
    down?.destroy()
  }
  client.once('error', end)
  backend.once('error', end)
  client.once('close', end)
  backend.once('close', end)
}

/** Answers one `upgrade` event of the listener. */
export async function handleUpgrade(
  server: UpgradeServer,
  info: ConnectionInfo,
  req: IncomingMessage,
  socket: Duplex,
  firstBytes: Buffer,
  /** `--max-connection-bytes-per-sec`: the most each direction moves a second; 0 is unlimited. */
  maxBytesPerSec = 0,
  dialers?: EgressDialers,
): Promise<void> {
  socket.on('error', () => socket.destroy())
  if (hasMalformedEscape(req.url ?? '')) return writeResponse(socket, malformedRequestResponse())
  let request: Request
  try {
    request = toRequest(req, socket)
  } catch (err) {
    return writeResponse(socket, statusResponse(new StatusError(400, 'BadRequest', err instanceof Error ? err.message : String(err))))
  }
  let handoff: UpgradeHandoff | undefined
  const response = await server.fetch(request, {
    ...info,
    headerLines: req.rawHeaders,
    passUpgrade: (h) => {
      handoff = h
    },
  })
  if (!handoff) return writeResponse(socket, response)
  await response.body?.cancel().catch(() => {})
  if (handoff.simulated) return playSimulatedStream(req, socket, firstBytes, handoff.simulated)
  let backend: Socket
  try {
    backend = await dialTarget(handoff, dialers)
  } catch (err) {
    // Upstream's upgrade proxy words a failed dial so.
    const message = `error dialing backend: ${err instanceof Error ? err.message : String(err)}`
    return writeResponse(socket, statusResponse(new StatusError(500, '' as StatusReason, message)))
  }
  if (socket.destroyed) {
    backend.destroy()
    return
  }
  const url = new URL(handoff.target.origin)
  return upgradeThrough(socket, backend, requestHead(handoff, url.host), firstBytes, maxBytesPerSec)
}
