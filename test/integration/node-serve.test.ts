/**
 * The Node listener against a stub ApiServer whose fetch echoes the
 * ConnectionInfo it was handed: TLS, HTTP/1.1 and HTTP/2 on one port,
 * client certificate verification, the hop-by-hop header trap, close(),
 * and core's own answers with the headers its filters add.
 */
import assert from 'node:assert/strict'
import { request as httpsRequest } from 'node:https'
import { connect as tlsConnect } from 'node:tls'
import { connect as http2Connect } from 'node:http2'
import { after, before, describe, it } from 'node:test'
import {
  type CertificateAuthority,
  type CertificateKeyPair,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { setAnswerHeader } from '../../core/http/answer-headers.js'
import { jsonResponse } from '../../core/http/respond.js'
import { type ConnectionInfo } from '../../core/ports.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

/**
 * An answer as core makes one (its headers a record under this adapter), with the header a filter adds
 * (`Audit-ID`) set after what the path names has read the answer as a filter might.
 */
async function ownAnswer(path: string): Promise<Response> {
  const response = jsonResponse({ kind: 'Status', apiVersion: 'v1', status: 'Success' })
  if (path === '/own/headers-read') assert.equal(response.headers.get('content-type'), 'application/json')
  if (path === '/own/body-read') assert.equal(JSON.parse(await response.clone().text()).status, 'Success')
  setAnswerHeader(response, 'audit-id', 'audit-1')
  if (path === '/own/hop') setAnswerHeader(response, 'keep-alive', 'timeout=5')
  if (path === '/own/close') setAnswerHeader(response, 'connection', 'close')
  return response
}

const stub: FetchHandler = {
  async fetch(request: Request, connection?: ConnectionInfo): Promise<Response> {
    const path = new URL(request.url).pathname
    if (path.startsWith('/own/')) return ownAnswer(path)
    if (path === '/hop') {
      return new Response('{"ok":true}', {
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', connection: 'close, x-private', 'keep-alive': 'timeout=5', 'x-private': '1', 'x-kept': 'yes' },
      })
    }
    if (path === '/stream') {
      let n = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 20))
          controller.enqueue(new TextEncoder().encode(`{"n":${n++}}\n`))
        },
      })
      return new Response(body, { headers: { 'content-type': 'application/json' } })
    }
    return Response.json({ connection: connection ?? null })
  },
}

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  httpVersion: string
}

function get1(port: number, path: string, ca: string, client?: CertificateKeyPair, host = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host, port, path, ca, ...(client ? { cert: client.certificate, key: client.privateKey } : {}), agent: false },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          body += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, httpVersion: res.httpVersion }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

function get2(port: number, path: string, ca: string, client?: CertificateKeyPair, host = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const authority = host.includes(':') ? `https://[${host}]:${port}` : `https://${host}:${port}`
    const session = http2Connect(authority, { ca, ...(client ? { cert: client.certificate, key: client.privateKey } : {}) })
    session.on('error', reject)
    // Node's client sends an IPv6 :authority without brackets; real clients bracket it.
    const stream = session.request({ ':path': path, ':authority': new URL(authority).host })
    let headers: Record<string, string | string[] | undefined> = {}
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (h) => {
      headers = h as Record<string, string | string[] | undefined>
    })
    stream.on('data', (c: string) => {
      body += c
    })
    stream.on('end', () => {
      session.close()
      resolve({ status: Number(headers[':status']), headers, body, httpVersion: '2.0' })
    })
    stream.on('error', reject)
  })
}

describe('serveTls', () => {
  let ca: CertificateAuthority
  let otherCa: CertificateAuthority
  let listener: TlsListener
  let alice: CertificateKeyPair
  let mallory: CertificateKeyPair
  let serving: CertificateKeyPair

  before(async () => {
    ca = await createCertificateAuthority({ commonName: 'test-ca' })
    otherCa = await createCertificateAuthority({ commonName: 'other-ca' })
    serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1', '::1'] })
    alice = await issueClientCertificate(ca, { commonName: 'alice', organizations: ['system:masters', 'dev'] })
    mallory = await issueClientCertificate(otherCa, { commonName: 'mallory', organizations: ['system:masters'] })
    listener = await serveTls(stub, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, clientCA: ca.certificate, logger: silentLogger })
  })
  after(async () => {
    await listener.close()
  })

  it('serves HTTP/1.1 and HTTP/2 on one port', async () => {
    const one = await get1(listener.port, '/', ca.certificate)
    assert.equal(one.status, 200)
    assert.equal(one.httpVersion, '1.1')
    const two = await get2(listener.port, '/', ca.certificate)
    assert.equal(two.status, 200)
    assert.deepEqual(JSON.parse(two.body).connection.clientCertificate, undefined)
  })

  it("offers HTTP/2 clients Go's 250 concurrent streams a connection, and the flag's number when given", async () => {
    const streamsOffered = async (port: number): Promise<number | undefined> => {
      const session = http2Connect(`https://127.0.0.1:${port}`, { ca: ca.certificate })
      try {
        return await new Promise((resolve, reject) => {
          session.once('remoteSettings', (settings) => resolve(settings.maxConcurrentStreams))
          session.once('error', reject)
        })
      } finally {
        session.close()
      }
    }
    assert.equal(await streamsOffered(listener.port), 250)
    const given = await serveTls(stub, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger, http2MaxStreams: 7 })
    try {
      assert.equal(await streamsOffered(given.port), 7)
    } finally {
      await given.close()
    }
  })

  it('closes a connection idle past the idle timeout: HTTP/1.1 after its answer, HTTP/2 with no stream open', { timeout: 15_000 }, async () => {
    const idle = await serveTls(stub, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger, idleTimeoutMs: 300 })
    try {
      // HTTP/1.1: a keep-alive connection that asked once (a plain socket: an Agent would follow the Keep-Alive hint itself).
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: idle.port, ca: ca.certificate, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => {
          socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        })
        let answered = 0
        socket.on('data', (chunk: Buffer) => {
          if (!answered && chunk.includes('\r\n\r\n')) answered = performance.now()
        })
        socket.once('close', () => resolve(performance.now() - answered))
        socket.once('error', reject)
      })
      assert.ok(closedAfter >= 250, `HTTP/1.1 closed ${Math.round(closedAfter)} ms after its answer, before the idle timeout`)
      // HTTP/2: the session lives while a stream is open, and goes once none has been for the timeout.
      const session = http2Connect(`https://127.0.0.1:${idle.port}`, { ca: ca.certificate })
      session.on('error', () => {})
      const stream = session.request({ ':path': '/' })
      stream.resume()
      await new Promise((resolve) => stream.once('close', resolve))
      const quiet = performance.now()
      await new Promise((resolve) => session.once('close', resolve))
      const after = performance.now() - quiet
      assert.ok(after >= 250, `HTTP/2 closed ${Math.round(after)} ms after its last stream, before the idle timeout`)
    } finally {
      await idle.close()
    }
  })

  for (const [proto, get] of [['HTTP/1.1', get1], ['HTTP/2', get2]] as const) {
    it(`${proto}: a certificate from the client CA is verified, with CN and O`, async () => {
      const reply = await get(listener.port, '/', ca.certificate, alice)
      const { connection } = JSON.parse(reply.body) as { connection: ConnectionInfo }
      assert.deepEqual(connection.clientCertificate, { verified: true, commonName: 'alice', organizations: ['system:masters', 'dev'] })
      assert.match(connection.remoteAddress ?? '', /127\.0\.0\.1/)
    })

    it(`${proto}: a certificate from another CA is not verified`, async () => {
      const reply = await get(listener.port, '/', ca.certificate, mallory)
      const { connection } = JSON.parse(reply.body) as { connection: ConnectionInfo }
      assert.equal(connection.clientCertificate?.verified, false)
      assert.equal(connection.clientCertificate?.commonName, 'mallory')
      assert.ok(connection.clientCertificate?.verifyError)
    })

    it(`${proto}: no certificate means no clientCertificate`, async () => {
      const reply = await get(listener.port, '/', ca.certificate)
      const { connection } = JSON.parse(reply.body) as { connection: ConnectionInfo }
      assert.equal(connection.clientCertificate, undefined)
    })

    it(`${proto}: hop-by-hop response headers are dropped instead of crashing`, async () => {
      const reply = await get(listener.port, '/hop', ca.certificate)
      assert.equal(reply.status, 200)
      assert.deepEqual(JSON.parse(reply.body), { ok: true })
      assert.equal(reply.headers['x-kept'], 'yes')
      assert.equal(reply.headers['x-private'], undefined)
      assert.equal(reply.headers['keep-alive'], undefined)
      // And the process still serves.
      assert.equal((await get(listener.port, '/', ca.certificate)).status, 200)
    })

    it(`${proto}: core's answers carry the headers added to them, whatever read them before`, async () => {
      for (const path of ['/own/plain', '/own/headers-read', '/own/body-read', '/own/hop', '/own/close']) {
        const reply = await get(listener.port, path, ca.certificate)
        assert.equal(reply.status, 200, path)
        assert.equal(JSON.parse(reply.body).status, 'Success', path)
        assert.equal(reply.headers['content-type'], 'application/json', path)
        assert.equal(reply.headers['audit-id'], 'audit-1', path)
        assert.equal(reply.headers['keep-alive'], undefined, path)
      }
      // A Connection: close added by a filter closes an HTTP/1.1 connection after the answer, as it did on a Headers object.
      if (proto === 'HTTP/1.1') assert.equal((await get(listener.port, '/own/close', ca.certificate)).headers['connection'], 'close')
    })
  }

  it('serves on ::1', async (t) => {
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: [], ipAddresses: ['::1'] })
    let v6: TlsListener
    try {
      v6 = await serveTls(stub, { host: '::1', port: 0, key: serving.privateKey, cert: serving.certificate, clientCA: ca.certificate, logger: silentLogger })
    } catch {
      t.skip('no IPv6 loopback on this machine')
      return
    }
    try {
      const reply = await get2(v6.port, '/', ca.certificate, alice, '::1')
      assert.equal(JSON.parse(reply.body).connection.clientCertificate.commonName, 'alice')
      assert.equal((await get1(v6.port, '/', ca.certificate, undefined, '::1')).status, 200)
    } finally {
      await v6.close()
    }
  })

  it('answers a request the adapter cannot parse with 400', async () => {
    const reply = await new Promise<number>((resolve, reject) => {
      const session = http2Connect(`https://127.0.0.1:${listener.port}`, { ca: ca.certificate })
      session.on('error', reject)
      const stream = session.request({ ':path': '/', ':authority': '::1:1234' })
      stream.on('response', (h) => {
        resolve(Number(h[':status']))
        session.close()
      })
      stream.resume()
    })
    assert.equal(reply, 400)
  })

  it('without a client CA requests no certificate', async () => {
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: [], ipAddresses: ['127.0.0.1'] })
    const plain = await serveTls(stub, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
    try {
      const reply = await get2(plain.port, '/', ca.certificate, alice)
      assert.equal(JSON.parse(reply.body).connection.clientCertificate, undefined)
    } finally {
      await plain.close()
    }
  })

  for (const proto of ['HTTP/1.1', 'HTTP/2'] as const) {
    it(`${proto}: close() ends a streaming response and resolves`, async () => {
      const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: [], ipAddresses: ['127.0.0.1'] })
      const own = await serveTls(stub, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, clientCA: ca.certificate, logger: silentLogger, drainTimeoutMs: 200 })
      const ended = new Promise<string>((resolve) => {
        const onStream = (stream: NodeJS.ReadableStream, done: () => void): void => {
          let first = true
          stream.on('data', () => {
            if (first) {
              first = false
              void own.close().then(() => resolve('closed'))
            }
          })
          stream.on('error', done)
          stream.on('close', done)
          stream.on('end', done)
        }
        if (proto === 'HTTP/2') {
          const session = http2Connect(`https://127.0.0.1:${own.port}`, { ca: ca.certificate })
          session.on('error', () => {})
          onStream(session.request({ ':path': '/stream' }), () => {})
        } else {
          const req = httpsRequest({ host: '127.0.0.1', port: own.port, path: '/stream', ca: ca.certificate, agent: false }, (res) => onStream(res, () => {}))
          req.on('error', () => {})
          req.end()
        }
      })
      const started = Date.now()
      assert.equal(await ended, 'closed')
      assert.ok(Date.now() - started < 3000)
    })
  }
})
