/**
 * Port-forward as a real node agent serves it to the API server: an HTTP
 * upgrade to SPDY/3.1 with `X-Stream-Protocol-Version: portforward.k8s.io`,
 * then per forwarded connection an error stream and a data stream sharing a
 * requestid; the data stream's bytes go to the pod's port (here a loopback
 * TCP server the test names for that port) and back. A WebSocket request is
 * refused as a real agent refuses a protocol it does not speak, so kubectl
 * falls back to SPDY.
 */
import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { type SpdyStream, SpdySession } from './spdy-framer.js'

/** Where each pod port is really served, by port number. */
export const podPorts = new Map<number, number>()

export function servePortForward(req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const upgrade = (req.headers.upgrade ?? '').toLowerCase()
  const protocols = String(req.headers['x-stream-protocol-version'] ?? '').split(',').map((p) => p.trim())
  if (upgrade !== 'spdy/3.1' || !protocols.includes('portforward.k8s.io')) {
    socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 19\r\nconnection: close\r\n\r\nunsupported upgrade')
    return
  }
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n',
  )
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>()
  const session = new SpdySession(socket, (stream, s) => {
    void s.reply(stream)
    const id = stream.headers.get('requestid') ?? ''
    const pair = pairs.get(id) ?? {}
    pairs.set(id, pair)
    if (stream.headers.get('streamtype') === 'error') pair.error = stream
    else if (stream.headers.get('streamtype') === 'data') pair.data = stream
    if (pair.error && pair.data) {
      pairs.delete(id)
      forward(s, pair.error, pair.data, Number(stream.headers.get('port')))
    }
  })
  if (head.length) session.receive(head)
}

function forward(session: SpdySession, error: SpdyStream, data: SpdyStream, port: number): void {
  const target = podPorts.get(port)
  if (target === undefined) {
    session.send(error, Buffer.from(`error forwarding port ${port}: no such port`), true)
    session.send(data, Buffer.alloc(0), true)
    return
  }
  const tcp: Socket = connect({ host: '127.0.0.1', port: target })
  data.onData = (bytes) => {
    tcp.write(bytes)
  }
  data.onEnd = () => tcp.end()
  error.onData = () => {}
  tcp.on('data', (bytes: Buffer) => {
    if (!session.send(data, bytes)) {
      tcp.pause()
      void session.drained().then(() => tcp.resume())
    }
  })
  let failed = false
  // The end of the pod's side ends the data stream; the error stream then ends empty (kubectl waits for it).
  tcp.on('end', () => session.send(data, Buffer.alloc(0), true))
  tcp.on('close', () => {
    if (!failed) session.send(error, Buffer.alloc(0), true)
  })
  tcp.on('error', (err) => {
    failed = true
    session.send(error, Buffer.from(`error forwarding port ${port}: ${err.message}`), true)
    session.send(data, Buffer.alloc(0), true)
  })
}
