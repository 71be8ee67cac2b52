/**
 * Request bodies read through the Node listener as the registry reads them
 * (readBodyBytes with a limit): a declared length and a chunked body, over
 * HTTP/1.1 and HTTP/2, within and past the limit. The stub answers with the
 * bytes it read, or the 413 the registry's handlers would send.
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { Agent, request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { readBodyBytes } from '../../core/http/body.js'
import { StatusError } from '../../core/machinery/status-error.js'
import { type CertificateAuthority, createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

const LIMIT = 4096

const echo: FetchHandler = {
  async fetch(request: Request): Promise<Response> {
    // Refused before the body is read, as an authorization failure is.
    if (new URL(request.url).pathname === '/refuse') return Response.json({ reason: 'Forbidden' }, { status: 403 })
    try {
      const bytes = await readBodyBytes(request, LIMIT)
      return Response.json({ length: bytes.byteLength, text: new TextDecoder().decode(bytes) })
    } catch (err) {
      if (err instanceof StatusError) return Response.json({ reason: err.reason }, { status: err.code })
      throw err
    }
  },
}

interface Reply {
  status: number
  body: { length?: number; text?: string; reason?: string }
}

/** POSTs `chunks` over HTTP/1.1: with Content-Length when `declare`, else chunked. */
function post1(port: number, ca: string, chunks: string[], declare: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const total = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0)
    const headers: Record<string, string | number> = { 'content-type': 'application/json' }
    if (declare) headers['content-length'] = total
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', ca, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Reply['body'] }))
      res.on('error', reject)
    })
    req.on('error', reject)
    for (const c of chunks) req.write(c)
    req.end()
  })
}

function post2(port: number, ca: string, text: string, declare: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://127.0.0.1:${port}`, { ca })
    session.on('error', reject)
    const headers: Record<string, string | number> = { ':method': 'POST', ':path': '/', 'content-type': 'application/json' }
    if (declare) headers['content-length'] = Buffer.byteLength(text)
    const stream = session.request(headers)
    let status = 0
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (h) => (status = Number(h[':status'])))
    stream.on('data', (c: string) => (body += c))
    stream.on('end', () => {
      session.close()
      resolve({ status, body: JSON.parse(body) as Reply['body'] })
    })
    stream.on('error', reject)
    stream.end(text)
  })
}

describe('request bodies through the Node listener', () => {
  let ca: CertificateAuthority
  let listener: TlsListener

  before(async () => {
    ca = await createCertificateAuthority({ commonName: 'test-ca' })
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    listener = await serveTls(echo, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
  })
  after(async () => {
    await listener?.close()
  })

  const small = ['{"kind":"ConfigMap",', '"data":{"a":"b"}}']
  const big = Array.from({ length: 8 }, () => 'x'.repeat(1000))

  for (const declare of [true, false]) {
    const how = declare ? 'with Content-Length' : 'chunked'
    it(`HTTP/1.1 ${how}: a body within the limit arrives whole`, async () => {
      const reply = await post1(listener.port, ca.certificate, small, declare)
      assert.equal(reply.status, 200)
      assert.equal(reply.body.text, small.join(''))
    })
    it(`HTTP/1.1 ${how}: a body past the limit is refused with 413`, async () => {
      const reply = await post1(listener.port, ca.certificate, big, declare)
      assert.equal(reply.status, 413)
      assert.equal(reply.body.reason, 'RequestEntityTooLarge')
    })
    it(`HTTP/2 ${how}: a body within the limit arrives whole, one past it gets 413`, async () => {
      const ok = await post2(listener.port, ca.certificate, small.join(''), declare)
      assert.equal(ok.status, 200)
      assert.equal(ok.body.text, small.join(''))
      const refused = await post2(listener.port, ca.certificate, big.join(''), declare)
      assert.equal(refused.status, 413)
    })
  }

  /** POSTs `bytes` to /refuse on a keep-alive socket of its own; the answer's status and Connection header, and whether the server then closed the socket. */
  function refusedUnread(bytes: number): Promise<{ status: number; connection: string | undefined; closedByServer: boolean }> {
    // An agent of its own: without a keep-alive agent the client itself asks for Connection: close.
    const agent = new Agent({ keepAlive: true })
    return new Promise((resolve) => {
      let socket: Socket | undefined
      const req = httpsRequest({ host: '127.0.0.1', port: listener.port, path: '/refuse', method: 'POST', ca: ca.certificate, headers: { 'content-length': bytes }, agent }, (res) => {
        res.resume()
        res.once('end', () => {
          const done = (closedByServer: boolean) => {
            clearTimeout(timer)
            agent.destroy()
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, closedByServer })
          }
          const timer = setTimeout(() => done(false), 500)
          if (socket?.destroyed) done(true)
          else socket?.once('close', () => done(true))
        })
      })
      req.once('socket', (s) => (socket = s))
      // The client may still be sending when the server closes: that is the point.
      req.on('error', () => {})
      req.end(Buffer.alloc(bytes, 0x61))
    })
  }

  it('a large body the handler left unread is not read to its end: the connection is closed after the answer', async () => {
    const reply = await refusedUnread(2 * 1024 * 1024)
    assert.equal(reply.status, 403)
    assert.equal(reply.connection, 'close')
    assert.equal(reply.closedByServer, true)
  })

  it('a small body the handler left unread is drained and the connection kept', async () => {
    const reply = await refusedUnread(1024)
    assert.equal(reply.status, 403)
    assert.notEqual(reply.connection, 'close')
    assert.equal(reply.closedByServer, false)
  })

  /** POSTs `bytes` to `path` in one write, as Node's http client sends a body it holds whole; the status it saw, or the socket error that took it. */
  function postWhole(path: string, bytes: number): Promise<string> {
    return new Promise((resolve) => {
      const req = httpsRequest({ host: '127.0.0.1', port: listener.port, path, method: 'POST', ca: ca.certificate, headers: { 'content-length': bytes }, agent: false }, (res) => {
        res.resume()
        resolve(String(res.statusCode))
      })
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
      req.end(Buffer.alloc(bytes, 0x61))
    })
  }

  it('a client still writing a large body the server refused unread reads the answer, not a reset', async () => {
    // Refused before any byte is read (a 413 on the declared length, a 403): closing the socket at once would reset the
    // client's writes before it reads the answer.
    const seen: string[] = []
    for (let i = 0; i < 12; i++) seen.push(await postWhole('/refuse', 10 * 1024 * 1024))
    assert.deepEqual(seen, Array(12).fill('403'))
  })

  it('an empty body with Content-Length: 0 reads as no bytes', async () => {
    const reply = await post1(listener.port, ca.certificate, [], true)
    assert.equal(reply.status, 200)
    assert.equal(reply.body.length, 0)
  })
})
