/**
 * A client certificate is verified for each request, not once per
 * connection, as upstream's x509 and front-proxy authenticators verify it:
 * after the client CA files are replaced, an HTTP/2 session or HTTP/1.1
 * keep-alive connection opened before is answered by the new bundles; a
 * certificate that expires while its connection is open stops
 * authenticating; a client that offers its earlier TLS session gets a full
 * handshake, so an expired certificate cannot ride on a resumed session.
 * The Node listener in front of a real server, anonymous requests refused.
 */
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2'
import { Agent, request as httpsRequest } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { after, afterEach, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  type CertificateAuthority,
  type CertificateKeyPair,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import type { ApiServer } from '../../core/server.js'
import { serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'
import { createTestServer, TestClient } from './harness.js'
import { clientCertificateViaIntermediate } from './openssl-chain.js'

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const REVIEW = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} })

interface Reply {
  status: number
  body: string
  /** The client's end of the connection that carried it: the same port, the same connection. */
  localPort: number
  /** The TLS session was resumed rather than negotiated afresh. */
  resumed: boolean
  /** The TLS session the server gave, to offer on a later connection. */
  session?: Buffer
}

interface Http1Call {
  client: { cert: string; key: string }
  agent?: Agent
  session?: Buffer
  method?: string
  path?: string
  body?: string
  headers?: Record<string, string>
}

function http1(port: number, ca: string, call: Http1Call): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        ca,
        ...call.client,
        method: call.method ?? 'GET',
        path: call.path ?? CONFIGMAPS,
        headers: { 'content-type': 'application/json', ...call.headers },
        ...(call.agent ? { agent: call.agent } : { agent: false, ...(call.session ? { session: call.session } : {}) }),
      },
      (res) => {
        const socket = res.socket as TLSSocket
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (body += c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, localPort: socket.localPort ?? 0, resumed: socket.isSessionReused(), ...(session ? { session } : {}) }),
        )
        res.on('error', reject)
      },
    )
    req.on('socket', (socket) => socket.on('session', (s: Buffer) => (session = s)))
    req.on('error', reject)
    req.end(call.body)
  })
}

function http2(session: ClientHttp2Session, call: { method?: string; path?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': call.method ?? 'GET', ':path': call.path ?? CONFIGMAPS, 'content-type': 'application/json', ...call.headers })
    let status = 0
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (h) => (status = Number(h[':status'])))
    stream.on('data', (c: string) => (body += c))
    stream.on('end', () => resolve({ status, body }))
    stream.on('error', reject)
    stream.end(call.body)
  })
}

/** Waits until `cert` has expired by the clock: at most its validity, a few seconds here. */
async function untilExpired(cert: string): Promise<void> {
  const notAfter = Date.parse(new X509Certificate(cert).validTo)
  await sleep(Math.max(0, notAfter - Date.now()) + 200)
}

const pair = (c: CertificateKeyPair) => ({ cert: c.certificate, key: c.privateKey })

describe('a client certificate verified on every request', () => {
  let clientCa: CertificateAuthority
  let proxyCa: CertificateAuthority
  let otherCa: CertificateAuthority
  let servingCA: string
  let server: ApiServer
  let api: TestClient
  let listener: TlsListener
  let alice: CertificateKeyPair
  let proxy: CertificateKeyPair
  const sessions: ClientHttp2Session[] = []

  const openSession = (client: { cert: string; key: string }): ClientHttp2Session => {
    const session = http2Connect(`https://127.0.0.1:${listener.port}`, { ca: servingCA, ...client })
    sessions.push(session)
    return session
  }
  const bundlesAtStart = () => ({ clientCA: clientCa.certificate, requestHeaderCA: proxyCa.certificate })

  before(async () => {
    clientCa = await createCertificateAuthority({ commonName: 'client-ca' })
    proxyCa = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    otherCa = await createCertificateAuthority({ commonName: 'other-ca' })
    const servingAuthority = await createCertificateAuthority({ commonName: 'serving-ca' })
    servingCA = servingAuthority.certificate
    const serving = await issueServingCertificate(servingAuthority, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    alice = await issueClientCertificate(clientCa, { commonName: 'alice', organizations: ['system:masters'] })
    proxy = await issueClientCertificate(proxyCa, { commonName: 'front-proxy-client', organizations: [] })
    server = createTestServer({
      authentication: {
        anonymous: false,
        clientCA: clientCa.certificate,
        requestHeader: { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: [], allowedNames: ['front-proxy-client'], clientCA: proxyCa.certificate },
      },
    })
    await server.ready
    api = new TestClient(server)
    listener = await serveTls(server, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, ...bundlesAtStart(), logger: silentLogger })
  })
  afterEach(() => {
    for (const session of sessions.splice(0)) session.destroy()
    listener.setClientCAs(bundlesAtStart())
  })
  after(async () => {
    await listener.close()
    await server.shutdown()
  })

  it('refuses with 401 the next request of an open HTTP/2 session once its CA is no longer in the client CA file', async () => {
    const session = openSession(pair(alice))
    assert.equal((await http2(session)).status, 200)
    listener.setClientCAs({ clientCA: otherCa.certificate, requestHeaderCA: proxyCa.certificate })
    const refused = await http2(session)
    assert.equal(refused.status, 401)
    assert.equal(JSON.parse(refused.body).reason, 'Unauthorized')
    // A create on the same session is refused too, and nothing is stored.
    const create = await http2(session, { method: 'POST', body: JSON.stringify({ metadata: { name: 'after-reload-h2' } }) })
    assert.equal(create.status, 401)
    assert.equal((await api.get(`${CONFIGMAPS}/after-reload-h2`)).status, 404)
  })

  it('refuses with 401 the next request of an open HTTP/1.1 keep-alive connection once its CA is no longer trusted', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const first = await http1(listener.port, servingCA, { client: pair(alice), agent })
      assert.equal(first.status, 200)
      listener.setClientCAs({ clientCA: otherCa.certificate, requestHeaderCA: proxyCa.certificate })
      const second = await http1(listener.port, servingCA, { client: pair(alice), agent, method: 'POST', body: JSON.stringify({ metadata: { name: 'after-reload-h1' } }) })
      assert.equal(second.localPort, first.localPort, 'the same connection')
      assert.equal(second.status, 401)
      assert.equal((await api.get(`${CONFIGMAPS}/after-reload-h1`)).status, 404)
    } finally {
      agent.destroy()
    }
  })

  it('keeps serving an open session whose CA the new client CA file still holds', async () => {
    const session = openSession(pair(alice))
    assert.equal((await http2(session)).status, 200)
    listener.setClientCAs({ clientCA: otherCa.certificate + clientCa.certificate, requestHeaderCA: proxyCa.certificate })
    assert.equal((await http2(session)).status, 200)
  })

  it('keeps refusing on its open session a certificate the handshake refused, after a reload that trusts it; a new connection is served', async () => {
    const mallory = await issueClientCertificate(otherCa, { commonName: 'mallory', organizations: ['system:masters'] })
    const session = openSession(pair(mallory))
    assert.equal((await http2(session)).status, 401)
    listener.setClientCAs({ clientCA: clientCa.certificate + otherCa.certificate, requestHeaderCA: proxyCa.certificate })
    assert.equal((await http2(session)).status, 401)
    // A new connection is verified against the new file.
    assert.equal((await http2(openSession(pair(mallory)))).status, 200)
  })

  it("stops believing an open session's proxy headers once the front-proxy CA file no longer holds its CA", async () => {
    const session = openSession(pair(proxy))
    const asBob = { 'x-remote-user': 'bob', 'x-remote-group': 'system:masters' }
    const seen = await http2(session, { method: 'POST', path: WHOAMI, body: REVIEW, headers: asBob })
    assert.equal(seen.status, 201, seen.body)
    assert.equal(JSON.parse(seen.body).status.userInfo.username, 'bob')
    listener.setClientCAs({ clientCA: clientCa.certificate, requestHeaderCA: otherCa.certificate })
    const create = await http2(session, { method: 'POST', body: JSON.stringify({ metadata: { name: 'proxied-after-reload' } }), headers: asBob })
    assert.equal(create.status, 401)
    assert.equal((await api.get(`${CONFIGMAPS}/proxied-after-reload`)).status, 404)
  })

  it('refuses with 401 a certificate once it has expired: on its open HTTP/2 session, its HTTP/1.1 keep-alive connection, and a new connection offering its earlier TLS session', async () => {
    const shortLived = await issueClientCertificate(clientCa, { commonName: 'brief', organizations: ['system:masters'], validityDays: 3 / 86_400 })
    const session = openSession(pair(shortLived))
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      assert.equal((await http2(session)).status, 200)
      const kept = await http1(listener.port, servingCA, { client: pair(shortLived), agent })
      assert.equal(kept.status, 200)
      const once = await http1(listener.port, servingCA, { client: pair(shortLived) })
      assert.equal(once.status, 200)
      assert.ok(once.session, 'the server gave a session to offer')
      await untilExpired(shortLived.certificate)

      assert.equal((await http2(session)).status, 401)
      const onKept = await http1(listener.port, servingCA, { client: pair(shortLived), agent, method: 'POST', body: JSON.stringify({ metadata: { name: 'expired' } }) })
      assert.equal(onKept.localPort, kept.localPort, 'the same connection')
      assert.equal(onKept.status, 401)
      const offered = await http1(listener.port, servingCA, { client: pair(shortLived), session: once.session, method: 'POST', body: JSON.stringify({ metadata: { name: 'resumed' } }) })
      assert.equal(offered.resumed, false)
      assert.equal(offered.status, 401)
      for (const name of ['expired', 'resumed']) assert.equal((await api.get(`${CONFIGMAPS}/${name}`)).status, 404)
    } finally {
      agent.destroy()
    }
  })

  it('serves a client that offers its earlier session with a chain through an intermediate, on a full handshake', async () => {
    const chained = clientCertificateViaIntermediate('carol', 'system:masters')
    listener.setClientCAs({ clientCA: clientCa.certificate + chained.root, requestHeaderCA: proxyCa.certificate })
    const client = { cert: chained.certificateChain, key: chained.privateKey }
    const first = await http1(listener.port, servingCA, { client })
    assert.equal(first.status, 200)
    const again = await http1(listener.port, servingCA, { client, ...(first.session ? { session: first.session } : {}) })
    assert.equal(again.resumed, false)
    assert.equal(again.status, 200)
  })

  it('verifies the chain of an open session once until the bundles change, not on each request', async () => {
    const session = openSession(pair(alice))
    const verify = X509Certificate.prototype.verify
    let verifications = 0
    X509Certificate.prototype.verify = function counted(this: X509Certificate, ...args: Parameters<X509Certificate['verify']>) {
      verifications++
      return verify.apply(this, args)
    }
    try {
      assert.equal((await http2(session)).status, 200)
      const afterFirst = verifications
      assert.ok(afterFirst > 0)
      for (let i = 0; i < 20; i++) assert.equal((await http2(session)).status, 200)
      assert.equal(verifications, afterFirst)
      listener.setClientCAs({ clientCA: clientCa.certificate + otherCa.certificate, requestHeaderCA: proxyCa.certificate })
      assert.equal((await http2(session)).status, 200)
      assert.ok(verifications > afterFirst, 'verified again against the new bundles')
    } finally {
      X509Certificate.prototype.verify = verify
    }
  })
})
