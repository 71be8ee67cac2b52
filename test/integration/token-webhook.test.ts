/**
 * The token webhook through `fetch`, against a real HTTPS webhook on
 * 127.0.0.1 that demands a client certificate of its own CA: TokenReview
 * versions, the answer cache, audiences passed on, and refusals stored nothing.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY, createApiServer, type TokenWebhookOptions } from '../../core/index.js'
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { TestClient } from './harness.js'

const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }

interface Received {
  apiVersion: string
  kind: string
  spec: { token: string; audiences?: string[] }
  clientName: string
}

describe('token webhook over HTTPS with a client certificate', () => {
  let webhook: Server
  let url = ''
  let caPem = ''
  let client: NodeWebhookClient
  let clientCertificate: { certificate: string; key: string }
  const received: Received[] = []
  /** Calls per token, for the retry tests. */
  const attempts = new Map<string, number>()
  const servers: ReturnType<typeof createApiServer>[] = []

  before(async () => {
    const serving = await createCertificateAuthority({ commonName: 'webhook-serving-ca' })
    const clients = await createCertificateAuthority({ commonName: 'webhook-client-ca' })
    const cert = await issueServingCertificate(serving, { commonName: 'webhook', dnsNames: [], ipAddresses: ['127.0.0.1'] })
    const apiserverCert = await issueClientCertificate(clients, { commonName: 'kube-apiserver', organizations: [] })
    caPem = serving.certificate
    clientCertificate = { certificate: apiserverCert.certificate, key: apiserverCert.privateKey }
    webhook = createServer({ cert: cert.certificate, key: cert.privateKey, ca: clients.certificate, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk.toString()))
      req.on('end', () => {
        const tokenReview = JSON.parse(body) as Received
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate()
        received.push({ ...tokenReview, clientName: String(peer.subject?.CN ?? '') })
        const token = tokenReview.spec.token
        const attempt = (attempts.get(token) ?? 0) + 1
        attempts.set(token, attempt)
        // Failures for the retry tests: the first call of a flaky token, every call of a failing one.
        if ((token.startsWith('flaky-') && attempt === 1) || token === 'always-500') {
          res.writeHead(500, { 'content-type': 'application/json' })
          return res.end('{"kind":"Status","status":"Failure","code":500}')
        }
        if (token === 'bad-request') {
          res.writeHead(400, { 'content-type': 'application/json' })
          return res.end('{"kind":"Status","status":"Failure","code":400}')
        }
        if (token.startsWith('reset-') && attempt === 1) return req.socket.destroy()
        const status =
          token === 'good-token' || token.endsWith('-good')
            ? {
                authenticated: true,
                user: { username: 'webhook-user', uid: 'w-1', groups: ['from-webhook'], extra: { 'example.com/team': ['blue'] } },
                // A webhook that knows nothing of audiences names none; a generous one names more than asked.
                audiences: token.startsWith('plain-') ? [] : token.startsWith('wide-') ? ['vault', 'elsewhere'] : (tokenReview.spec.audiences ?? []),
              }
            : token === 'broken-token'
              ? { authenticated: false, error: 'the token is broken' }
              : { authenticated: false }
        const answer = () => {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ apiVersion: tokenReview.apiVersion, kind: 'TokenReview', status }))
        }
        // A slow webhook, so that requests bringing the token meanwhile are seen waiting for its answer.
        if (token.startsWith('slow-')) setTimeout(answer, 200)
        else answer()
      })
    })
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve))
    url = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/authenticate`
    client = nodeWebhookClient()
  })

  after(async () => {
    await Promise.all(servers.map((s) => s.shutdown()))
    client.close()
    webhook.closeAllConnections()
    await new Promise((resolve) => webhook.close(resolve))
  })

  async function start(options: Partial<TokenWebhookOptions> = {}, apiAudiences?: string[], tokenSuccessCacheTtlMs?: number): Promise<TestClient> {
    const tokenWebhook: TokenWebhookOptions = { url, certificateAuthority: caPem, clientCertificate, ...options }
    if (!tokenWebhook.clientCertificate) delete tokenWebhook.clientCertificate
    const authentication = { tokenWebhook, ...(apiAudiences ? { apiAudiences } : {}), ...(tokenSuccessCacheTtlMs !== undefined ? { tokenSuccessCacheTtlMs } : {}) }
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, authentication }, { webhookClient: client })
    servers.push(server)
    await server.ready
    return new TestClient(server)
  }

  const as = (token: string) => ({ connection: {}, headers: { authorization: `Bearer ${token}` } })

  it('asks the webhook with a v1beta1 TokenReview by default, presenting the client certificate, and runs as its user', async () => {
    const api = await start()
    received.length = 0
    const r = await api.post(whoami, review, as('good-token'))
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status.userInfo, {
      username: 'webhook-user',
      uid: 'w-1',
      groups: ['from-webhook', 'system:authenticated'],
      extra: { 'example.com/team': ['blue'] },
    })
    assert.equal(received.length, 1)
    assert.equal(received[0]!.apiVersion, 'authentication.k8s.io/v1beta1')
    assert.equal(received[0]!.kind, 'TokenReview')
    assert.equal(received[0]!.clientName, 'kube-apiserver')
  })

  it('sends v1 when asked, and caches answers, yes and no, for the TTL', async () => {
    const api = await start({ version: 'v1' })
    received.length = 0
    for (let i = 0; i < 3; i++) assert.equal((await api.post(whoami, review, as('good-token'))).status, 201)
    for (let i = 0; i < 2; i++) assert.equal((await api.get('/api/v1/namespaces', as('unknown-token'))).status, 401)
    assert.deepEqual(
      received.map((r) => [r.apiVersion, r.spec.token]),
      [
        ['authentication.k8s.io/v1', 'good-token'],
        ['authentication.k8s.io/v1', 'unknown-token'],
      ],
    )
  })

  it('asks again every time with a zero TTL, once the server-wide token cache is off too', async () => {
    // The server's token cache, in front of every token authenticator, keeps a success ten seconds whatever the webhook's TTL.
    const cached = await start({ cacheTtlMs: 0 })
    received.length = 0
    for (let i = 0; i < 2; i++) assert.equal((await cached.post(whoami, review, as('good-token'))).status, 201)
    assert.equal(received.length, 1)
    const api = await start({ cacheTtlMs: 0 }, undefined, 0)
    received.length = 0
    for (let i = 0; i < 2; i++) assert.equal((await api.post(whoami, review, as('good-token'))).status, 201)
    assert.equal(received.length, 2)
  })

  it('asks once for a token that several requests bring while the webhook answers, as upstream shares one lookup', async () => {
    const api = await start({ cacheTtlMs: 0 })
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post(whoami, review, as('slow-good'))))
    assert.deepEqual(
      answers.map((a) => [a.status, a.body.status?.userInfo?.username]),
      answers.map(() => [201, 'webhook-user']),
    )
    assert.equal(attempts.get('slow-good'), 1)
  })

  it('refuses a token the webhook does not accept with 401 and stores nothing', async () => {
    const api = await start()
    for (const token of ['unknown-token', 'broken-token']) {
      const name = `by-${token}`
      const r = await api.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, as(token))
      assert.equal(r.status, 401, r.text)
      assert.equal((await api.get(`/api/v1/namespaces/default/configmaps/${name}`)).status, 404)
    }
  })

  it('passes TokenReview audiences on to the webhook', async () => {
    const api = await start()
    received.length = 0
    const r = await api.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'good-token', audiences: ['vault'] },
    })
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.status.authenticated, true)
    assert.deepEqual(received[0]!.spec.audiences, ['vault'])
  })

  it("vouches, when the webhook names no audiences, only for the API's own: a TokenReview for another audience is not authenticated", async () => {
    const api = await start({}, ['https://api.example'])
    const ask = async (token: string, audiences: string[]) => {
      const r = await api.post('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences },
      })
      assert.equal(r.status, 201, r.text)
      return r.body.status
    }
    // The attack: a token the webhook accepts for the API, presented to a third party that reviews it for itself.
    assert.deepEqual(await ask('plain-good', ['vault']), { user: {} })
    const both = await ask('plain-good', ['vault', 'https://api.example'])
    assert.equal(both.authenticated, true)
    assert.deepEqual(both.audiences, ['https://api.example'])
    // What the webhook names is cut to what was asked.
    const wide = await ask('wide-good', ['vault', 'other'])
    assert.equal(wide.authenticated, true)
    assert.deepEqual(wide.audiences, ['vault'])
    // A request of the API itself is asked for the API's audiences, which a webhook naming none vouches for.
    assert.equal((await api.post(whoami, review, as('plain-good'))).status, 201)
  })

  it("asks again with upstream's backoff when the webhook answers 500 or drops the connection, and runs as the user of the answer that came", async () => {
    const api = await start()
    for (const token of ['flaky-good', 'reset-good']) {
      const r = await api.post(whoami, review, as(token))
      assert.equal(r.status, 201, r.text)
      assert.equal(r.body.status.userInfo.username, 'webhook-user')
      assert.equal(attempts.get(token), 2)
    }
  })

  it('gives up after five attempts of a webhook that keeps failing, and does not retry a 400: both refused with 401, nothing stored', async () => {
    const api = await start()
    for (const [token, calls] of [
      ['always-500', 5],
      ['bad-request', 1],
    ] as const) {
      const name = `by-${token}`
      const r = await api.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, as(token))
      assert.equal(r.status, 401, r.text)
      assert.equal(r.body.reason, 'Unauthorized')
      assert.equal(attempts.get(token), calls)
      assert.equal((await api.get(`/api/v1/namespaces/default/configmaps/${name}`)).status, 404)
    }
  })

  it('refuses every token when the webhook cannot be reached as configured (no client certificate)', async () => {
    const api = await start({ clientCertificate: undefined })
    const r = await api.get('/api/v1/namespaces', as('good-token'))
    assert.equal(r.status, 401)
  })
})
