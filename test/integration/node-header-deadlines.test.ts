/**
 * Slow clients on the Node listener (runtimes/node/adapter/header-deadlines.ts):
 * a TLS handshake and, on HTTP/1.1, a request's headers are due within
 * upstream's ReadHeaderTimeout. The listener here has 300 ms for it, and
 * 300 ms of idle time between requests. A client that never finishes its
 * request line, or sends a header byte at a time, or does so after an
 * answered request, loses its connection without an answer; they had kept
 * it for as long as they liked. A request whose headers come in pieces
 * within the deadline is served (on a listener whose deadline no stall of
 * this process nears), and a watch stays open past it.
 */
import assert from 'node:assert/strict'
import { connect as tcpConnect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { connect, type TLSSocket } from 'node:tls'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { createTestServer, TestClient } from './harness.js'
import { serveOnLoopback } from './node-listener.js'

const DEADLINE_MS = 300
const TOKEN = 'slow-admin-token'

interface Connection {
  socket: TLSSocket
  /** Everything the server sent, so far. */
  received: () => string
  /** Resolves with everything the server sent once it closed the connection. */
  closed: Promise<string>
}

function open(port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      socket.off('error', reject)
      socket.on('error', () => {})
      resolve({ socket, received: () => text, closed })
    })
    let text = ''
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')))
    const closed = new Promise<string>((done) => socket.once('close', () => done(text)))
    socket.once('error', reject)
  })
}

/** Writes one byte of `text` at a time, every 50 ms, until the connection closes or the text runs out. */
async function trickle(connection: Connection, text: string): Promise<number> {
  let sent = 0
  for (const byte of text) {
    if (connection.socket.destroyed) break
    connection.socket.write(byte)
    sent++
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return sent
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10))
}

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`

describe('slow clients on the Node listener', { timeout: 60_000 }, () => {
  let server: ApiServer
  let listener: TlsListener
  /** Deadlines no stall of this test's process comes near, for what must be served. */
  let lenient: TlsListener

  before(async () => {
    server = createTestServer({ authentication: { tokens: [{ token: TOKEN, user: { username: 'admin', groups: ['system:masters'] } }] } })
    await server.ready
    listener = await serveOnLoopback(server, { readHeaderTimeoutMs: DEADLINE_MS, idleTimeoutMs: DEADLINE_MS })
    lenient = await serveOnLoopback(server, { readHeaderTimeoutMs: 30_000 })
  })
  after(async () => {
    await listener?.close()
    await lenient?.close()
    await server?.shutdown()
  })

  it('closes, without an answer, a connection whose request line never ends', async () => {
    const connection = await open(listener.port)
    connection.socket.write('GET /api/v1/namespaces HT')
    assert.equal(await connection.closed, '')
  })

  it('closes a connection that sends its headers a byte at a time', async () => {
    const connection = await open(listener.port)
    // 400 bytes at 50 ms each would take 20 s; the deadline ends it long before.
    const sent = await trickle(connection, `GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(360)}\r\n\r\n`)
    assert.equal(await connection.closed, '')
    assert.ok(sent < 400, `all ${sent} bytes were taken`)
  })

  it('closes a kept-alive connection that trickles its next request after an answer', async () => {
    const connection = await open(listener.port)
    connection.socket.write(request('/version'))
    await until(() => connection.received().includes('"gitVersion"'))
    assert.match(connection.received(), /^HTTP\/1\.1 200 /)
    const sent = await trickle(connection, `GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(360)}\r\n\r\n`)
    const text = await connection.closed
    assert.equal(text.match(/HTTP\/1\.1 /g)?.length, 1, 'only the first request was answered')
    assert.ok(sent < 400, `all ${sent} bytes were taken`)
  })

  it('closes a connection that never begins its TLS handshake', async () => {
    const socket = tcpConnect(listener.port, '127.0.0.1')
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('close', resolve))
  })

  it('serves headers that come in pieces within the deadline', async () => {
    const connection = await open(lenient.port)
    const whole = request('/version')
    connection.socket.write(whole.slice(0, 20))
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.socket.write(whole.slice(20))
    await until(() => connection.received().includes('"gitVersion"'))
    assert.match(connection.received(), /^HTTP\/1\.1 200 /)
    connection.socket.destroy()
  })

  it('keeps a watch open past the deadline', async () => {
    const connection = await open(listener.port)
    connection.socket.write(request('/api/v1/namespaces/default/configmaps?watch=1'))
    await until(() => connection.received().includes('\r\n\r\n'))
    assert.match(connection.received(), /^HTTP\/1\.1 200 /)
    // Several deadlines and idle timeouts later, the watch still gets what is written.
    await new Promise((resolve) => setTimeout(resolve, 6 * DEADLINE_MS))
    assert.equal(connection.socket.destroyed, false)
    const created = await new TestClient(server).post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'after-the-deadline' } })
    assert.equal(created.status, 201)
    await until(() => connection.received().includes('after-the-deadline'))
    connection.socket.destroy()
  })
})
