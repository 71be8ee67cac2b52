/**
 * Request bodies read through the Node listener as the registry reads them
 * (readBodyBytes with a limit): a declared length and a chunked body, over
 * HTTP/1.1 and HTTP/2, within and past the limit. The stub answers with the
 * bytes it read, or the 413 the registry's handlers would send.
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { request as httpsRequest } from 'node:https'
import { after, before, describe, it } from 'node:test'
import { readBodyBytes } from '../../core/http/body.js'
import { StatusError } from '../../core/machinery/status-error.js'
import { type CertificateAuthority, createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/ports.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/serve.js'

const LIMIT = 4096

const echo: FetchHandler = {
  async fetch(request: Request): Promise<Response> {
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

  it('an empty body with Content-Length: 0 reads as no bytes', async () => {
    const reply = await post1(listener.port, ca.certificate, [], true)
    assert.equal(reply.status, 200)
    assert.equal(reply.body.length, 0)
  })
})
