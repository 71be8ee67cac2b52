/**
 * An HTTP/2 connection whose client began a request's header block and
 * never ended it (a HEADERS frame without END_HEADERS, then silence) has no
 * stream a handler sees, so its connection is idle: it gets the GOAWAY of
 * the idle timeout, and is cut a moment later (Go's goAwayTimeout) when the
 * client does not close it. Node's graceful close waited on that stream
 * for good, and each such connection held a file descriptor as long as its
 * client liked.
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { serveOnLoopback } from './node-listener.js'

/** One HTTP/2 frame: length, type, flags, stream id, payload. */
function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9)
  head.writeUIntBE(payload.length, 0, 3)
  head[3] = type
  head[4] = flags
  head.writeUInt32BE(streamId, 5)
  return Buffer.concat([head, payload])
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')
const SETTINGS = 0x4
const HEADERS = 0x1
/** HPACK: :method GET, :scheme https, :path / (static table entries); no END_HEADERS flag, no CONTINUATION after. */
const UNFINISHED_HEADER_BLOCK = Buffer.from([0x82, 0x87, 0x84])

function openUnfinishedRequest(port: number): TLSSocket {
  const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
    socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, Buffer.alloc(0)), frame(HEADERS, 0, 1, UNFINISHED_HEADER_BLOCK)]))
  })
  socket.on('data', () => {})
  socket.on('error', () => {})
  return socket
}

describe('HTTP/2 connections whose header block never ends', () => {
  let listener: TlsListener

  before(async () => {
    listener = await serveOnLoopback({ fetch: async () => new Response('ok') }, { idleTimeoutMs: 200 })
  })
  after(async () => {
    await listener.close()
  })

  it('are closed by the server after the idle timeout, while other clients are answered', { timeout: 30_000 }, async () => {
    const sockets = Array.from({ length: 20 }, () => openUnfinishedRequest(listener.port))
    const closed = Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))))
    const session = http2Connect(`https://127.0.0.1:${listener.port}`, { rejectUnauthorized: false })
    session.on('error', () => {})
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/' })
      stream.once('response', (headers) => resolve(Number(headers[':status'])))
      stream.once('error', reject)
      stream.resume()
    })
    assert.equal(status, 200)
    session.close()
    // Without the cut, these never close: the test's own timeout fails it.
    await closed
    assert.ok(sockets.every((socket) => socket.destroyed))
  })
})
