/**
 * The HTTP/2 client connection (runtimes/node/storage/h2/connection.ts)
 * against a real HTTP/2 server on loopback: Node's own, whose encoder
 * indexes and Huffman-codes what it sends and whose flow control holds the
 * client to the protocol's default windows.
 */
import assert from 'node:assert/strict'
import * as http2 from 'node:http2'
import * as net from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueServingCertificate } from '../../../core/pki/certificates.js'
import { ClientConnection, type StreamEnd } from '../../../runtimes/node/storage/h2/connection.js'
import { encodeRequestHeaders } from '../../../runtimes/node/storage/h2/hpack.js'

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, session: http2.ServerHttp2Session) => void

interface Answer {
  headers: Array<[string, string]>
  body: Buffer
  failure: StreamEnd | undefined
}

async function listen(server: http2.Http2Server | http2.Http2SecureServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function block(path: string, scheme = 'http'): Buffer {
  return encodeRequestHeaders([
    [':method', 'POST'],
    [':scheme', scheme],
    [':path', path],
    [':authority', 'localhost'],
    ['te', 'trailers'],
  ])
}

function call(connection: ClientConnection, path: string, body: Buffer | undefined, scheme = 'http'): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Array<[string, string]> = []
    const chunks: Buffer[] = []
    connection.request(block(path, scheme), body, {
      header: (name, value) => headers.push([name, value]),
      data: (chunk) => chunks.push(Buffer.from(chunk)),
      end: (failure) => resolve({ headers, body: Buffer.concat(chunks), failure }),
    })
  })
}

const field = (answer: Answer, name: string) => answer.headers.filter(([n]) => n === name).map(([, v]) => v)

/** Reads a request's body whole, then answers with `respond`. */
function readBody(stream: http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('end', () => resolve(Buffer.concat(chunks)))
  })
}

describe('HTTP/2 client connection', () => {
  let server: http2.Http2Server
  let port: number
  let handler: Handler
  const sessions = new Set<http2.ServerHttp2Session>()

  before(async () => {
    server = http2.createServer()
    server.on('stream', (stream, headers) => handler(stream, headers, stream.session as http2.ServerHttp2Session))
    server.on('session', (s) => {
      sessions.add(s)
      s.on('close', () => sessions.delete(s))
    })
    port = await listen(server)
  })

  after(async () => {
    for (const s of sessions) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })

  const connect = () => new ClientConnection({ url: new URL(`http://127.0.0.1:${port}`) })

  it('sends a request and reads headers, data and trailers, as a unary gRPC call has them', async () => {
    handler = (stream) => {
      void readBody(stream).then((body) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'fine' }))
        stream.end(Buffer.concat([Buffer.from('echo:'), body]))
      })
    }
    const connection = connect()
    const answer = await call(connection, '/svc/Echo', Buffer.from('hello'))
    assert.equal(answer.failure, undefined)
    assert.deepEqual(field(answer, ':status'), ['200'])
    assert.deepEqual(field(answer, 'grpc-status'), ['0'])
    assert.deepEqual(field(answer, 'grpc-message'), ['fine'])
    assert.equal(answer.body.toString(), 'echo:hello')
    assert.ok(connection.connected)
    connection.close()
  })

  it('keeps its header table in step with the server over many answers (indexed, Huffman-coded, evicted)', async () => {
    handler = (stream, headers) => {
      // Values long and distinct enough that the server's 4 KiB table turns over many times.
      const n = String(headers[':path']).slice(1)
      stream.respond({ ':status': 200, 'x-n': n, 'x-filler': `${n}-${'#~'.repeat(Number(n) % 40)}-${'z'.repeat(200)}`, 'x-same': 'constant' })
      stream.end(n)
    }
    const connection = connect()
    const answers = await Promise.all(Array.from({ length: 400 }, (_, i) => call(connection, `/${i}`, Buffer.alloc(0))))
    answers.forEach((answer, i) => {
      assert.equal(answer.failure, undefined)
      assert.deepEqual(field(answer, 'x-n'), [String(i)])
      assert.deepEqual(field(answer, 'x-same'), ['constant'])
      // '#' and '~' have long Huffman codes (12 and 13 bits): codes across byte boundaries.
      assert.deepEqual(field(answer, 'x-filler'), [`${i}-${'#~'.repeat(i % 40)}-${'z'.repeat(200)}`])
      assert.equal(answer.body.toString(), String(i))
    })
    connection.close()
  })

  it('sends and receives bodies far larger than the windows, under flow control both ways', async () => {
    handler = (stream) => {
      void readBody(stream).then((body) => {
        stream.respond({ ':status': 200 })
        // Five times what came, so more than the client's stream window of 8 MiB.
        stream.end(Buffer.concat([body, body, body, body, body]))
      })
    }
    const connection = connect()
    const sent = Buffer.alloc(3 * 1024 * 1024 + 7)
    for (let i = 0; i < sent.length; i++) sent[i] = (i * 31) & 0xff
    const [a, b] = await Promise.all([call(connection, '/big', sent), call(connection, '/big', sent.subarray(0, 100_000))])
    assert.equal(a.failure, undefined)
    assert.equal(a.body.length, sent.length * 5)
    assert.ok(a.body.subarray(sent.length * 4).equals(sent))
    assert.equal(b.body.length, 500_000)
    connection.close()
  })

  it('streams both ways on one stream, and a cancel reaches the server as CANCEL', async () => {
    let serverSaw: Promise<number> | undefined
    handler = (stream) => {
      stream.respond({ ':status': 200 })
      stream.on('data', (c: Buffer) => stream.write(`got ${c.toString()};`))
      serverSaw = new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)))
    }
    const connection = connect()
    const received: string[] = []
    let ended = false
    const stream = connection.request(block('/watch'), undefined, {
      header: () => {},
      data: (chunk) => received.push(chunk.toString()),
      end: () => (ended = true),
    })
    stream.write(Buffer.from('one'), false)
    stream.write(Buffer.from('two'), false)
    while (received.join('') !== 'got one;got two;') await new Promise((r) => setTimeout(r, 5))
    stream.cancel()
    assert.equal(await serverSaw, http2.constants.NGHTTP2_CANCEL)
    assert.equal(ended, false, 'a cancelled stream calls no more events')
    connection.close()
  })

  it('ends a stream the server resets: a refused stream did not reach it, a cancelled one may have', async () => {
    handler = (stream, headers) => {
      // The server's own stream reports the reset it sent as an error.
      stream.on('error', () => {})
      stream.close(headers[':path'] === '/refuse' ? http2.constants.NGHTTP2_REFUSED_STREAM : http2.constants.NGHTTP2_INTERNAL_ERROR)
    }
    const connection = connect()
    const [refused, reset] = await Promise.all([call(connection, '/refuse', Buffer.alloc(0)), call(connection, '/reset', Buffer.alloc(0))])
    assert.deepEqual(refused.failure, { message: 'stream closed without a status (HTTP/2 code 7)', reached: false, code: 7 })
    assert.deepEqual(reset.failure, { message: 'stream closed without a status (HTTP/2 code 2)', reached: true, code: 2 })
    assert.ok(connection.usable, 'a reset stream leaves the connection usable')
    connection.close()
  })

  it('answers a ping, and keeps to the server limit on concurrent streams', async () => {
    const limited = http2.createServer({ settings: { maxConcurrentStreams: 2 } })
    let open = 0
    let most = 0
    limited.on('stream', (stream) => {
      open++
      most = Math.max(most, open)
      setTimeout(() => {
        open--
        stream.respond({ ':status': 200 })
        stream.end('ok')
      }, 5)
    })
    const limitedPort = await listen(limited)
    try {
      const connection = new ClientConnection({ url: new URL(`http://127.0.0.1:${limitedPort}`) })
      await new Promise<void>((resolve) => connection.ping(resolve))
      const answers = await Promise.all(Array.from({ length: 7 }, () => call(connection, '/x', Buffer.alloc(0))))
      assert.deepEqual(
        answers.map((a) => [a.failure, a.body.toString()]),
        Array.from({ length: 7 }, () => [undefined, 'ok']),
      )
      assert.equal(most, 2)
      connection.close()
    } finally {
      await new Promise((resolve) => limited.close(resolve))
    }
  })

  it('on GOAWAY, streams the server did not take fail as not reached and the rest finish', async () => {
    let first: http2.ServerHttp2Stream | undefined
    handler = (stream, headers, session) => {
      if (headers[':path'] !== '/first') return
      first = stream
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, 1)
    }
    const connection = connect()
    const kept = call(connection, '/first', Buffer.alloc(0))
    while (!first) await new Promise((r) => setTimeout(r, 2))
    // Sent after the server's GOAWAY left, before it arrived or after: either way stream 3 is not taken.
    const refused = await call(connection, '/second', Buffer.alloc(0))
    assert.equal(refused.failure?.reached, false)
    assert.equal(connection.usable, false)
    first.respond({ ':status': 200 })
    first.end('done')
    const answer = await kept
    assert.equal(answer.failure, undefined)
    assert.equal(answer.body.toString(), 'done')
  })

  it('fails every open stream when the connection drops, as reached once it had connected', async () => {
    handler = (_stream, _headers, session) => setTimeout(() => session.destroy(), 5)
    const connection = connect()
    let closed = false
    connection.onClose(() => (closed = true))
    const answer = await call(connection, '/hang', Buffer.alloc(0))
    assert.equal(answer.failure?.reached, true)
    assert.equal(closed, true)
    assert.equal(connection.usable, false)
    // A call on a failed connection ends at once, as it did.
    const late = await call(connection, '/late', Buffer.alloc(0))
    assert.equal(late.failure?.reached, true)
  })

  it('reports a server that cannot be reached as not reached, with the socket error', async () => {
    const closedServer = http2.createServer()
    const unusedPort = await listen(closedServer)
    await new Promise((resolve) => closedServer.close(resolve))
    const connection = new ClientConnection({ url: new URL(`http://127.0.0.1:${unusedPort}`) })
    const answer = await call(connection, '/x', Buffer.alloc(0))
    assert.equal(answer.failure?.reached, false)
    assert.match(answer.failure!.message, /ECONNREFUSED/)
  })

  it('closes gracefully: calls under way finish, then the connection ends', async () => {
    let held: http2.ServerHttp2Stream | undefined
    handler = (stream) => (held = stream)
    const connection = connect()
    const pending = call(connection, '/slow', Buffer.alloc(0))
    while (!held) await new Promise((r) => setTimeout(r, 2))
    let closed = false
    connection.onClose(() => (closed = true))
    connection.close()
    assert.equal(connection.usable, false)
    assert.equal(closed, false)
    held.respond({ ':status': 200 })
    held.end('late')
    assert.equal((await pending).body.toString(), 'late')
    assert.equal(closed, true)
  })
})

describe('HTTP/2 client connection over TLS', () => {
  it('negotiates h2 by ALPN and verifies the server against the CA given', async () => {
    const authority = await createCertificateAuthority({ commonName: 'h2-test-ca' })
    const serving = await issueServingCertificate(authority, { commonName: 'h2', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    const server = http2.createSecureServer({ cert: serving.certificate, key: serving.privateKey })
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 })
      stream.end('secure')
    })
    const port = await listen(server)
    try {
      const trusted = new ClientConnection({ url: new URL(`https://127.0.0.1:${port}`), tls: { ca: authority.certificate } })
      const answer = await call(trusted, '/x', Buffer.alloc(0), 'https')
      assert.equal(answer.failure, undefined)
      assert.equal(answer.body.toString(), 'secure')
      trusted.close()
      const other = await createCertificateAuthority({ commonName: 'another-ca' })
      const untrusted = new ClientConnection({ url: new URL(`https://127.0.0.1:${port}`), tls: { ca: other.certificate } })
      const refused = await call(untrusted, '/x', Buffer.alloc(0), 'https')
      assert.equal(refused.failure?.reached, false)
      assert.match(refused.failure!.message, /certificate/)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('HTTP/2 client connection against a server that breaks the protocol', () => {
  /** A raw server that answers the client's preface with `bytes`, and hands back everything the client sent. */
  async function brokenServer(bytes: Buffer): Promise<{ port: number; received: () => Buffer; close: () => Promise<void> }> {
    const chunks: Buffer[] = []
    const sockets = new Set<net.Socket>()
    const server = net.createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.once('data', () => socket.write(bytes))
      socket.on('data', (c: Buffer) => chunks.push(c))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return {
      port: (server.address() as AddressInfo).port,
      received: () => Buffer.concat(chunks),
      close: async () => {
        for (const s of sockets) s.destroy()
        await new Promise((resolve) => server.close(resolve))
      },
    }
  }

  const frameBytes = (type: number, flags: number, id: number, payload: Buffer, length = payload.length) => {
    const head = Buffer.alloc(9)
    head.writeUIntBE(length, 0, 3)
    head[3] = type
    head[4] = flags
    head.writeUInt32BE(id, 5)
    return Buffer.concat([head, payload])
  }

  /** The error code of the GOAWAY frame among the client's bytes, if it sent one. */
  function goawayCode(sent: Buffer): number | undefined {
    let at = 24 // the connection preface
    while (at + 9 <= sent.length) {
      const length = sent.readUIntBE(at, 3)
      if (sent[at + 3] === 0x7) return sent.readUInt32BE(at + 9 + 4)
      at += 9 + length
    }
    return undefined
  }

  const cases: Array<[string, Buffer, RegExp, number]> = [
    ['a frame longer than the 16 KiB allowed', frameBytes(0x0, 0, 1, Buffer.alloc(0), 20000), /a frame of 20000 bytes exceeds the 16384 allowed/, 0x6],
    ['a server push, which the client turned off', frameBytes(0x5, 0x4, 1, Buffer.alloc(8)), /PUSH_PROMISE when push is disabled/, 0x1],
    ['a header block that refers to index 0', frameBytes(0x1, 0x4, 1, Buffer.from([0x80])), /index 0/, 0x9],
  ]
  for (const [what, bytes, message, code] of cases) {
    it(`fails the connection on ${what}, its streams as reached, and tells the server why`, async () => {
      const server = await brokenServer(bytes)
      try {
        const connection = new ClientConnection({ url: new URL(`http://127.0.0.1:${server.port}`) })
        const answer = await call(connection, '/x', Buffer.alloc(0))
        assert.equal(answer.failure?.reached, true)
        assert.match(answer.failure!.message, /^HTTP\/2 protocol error from the server: /)
        assert.match(answer.failure!.message, message)
        assert.equal(connection.usable, false)
        for (let i = 0; i < 400 && goawayCode(server.received()) === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 5))
        assert.equal(goawayCode(server.received()), code)
      } finally {
        await server.close()
      }
    })
  }
})
