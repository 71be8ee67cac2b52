/**
 * A bearer token in a WebSocket subprotocol (core/authn/websocket-protocol.ts),
 * as browsers' clients send it: `exec` over the Node listener to a real node
 * agent on loopback authenticates with it, and the agent never sees the
 * token (its protocol is taken out before the request is passed on). A token
 * that is wrong, alone, given twice or not base64url, and one on a request
 * that is no WebSocket upgrade, is a 401.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WebSocket } from 'ws'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { createTestServer, TestClient } from './harness.js'
import { type NodeAgent, nodeAgentOptions, startNodeAgent } from './node-agent-server.js'
import { sendRaw, serveOnLoopback } from './node-listener.js'

const TOKEN = 'websocket-admin-token'
const PREFIX = 'base64url.bearer.authorization.k8s.io.'
const V5 = 'v5.channel.k8s.io'
const tokenProtocol = (token: string) => PREFIX + Buffer.from(token).toString('base64url')

describe('a bearer token in a WebSocket subprotocol', () => {
  let agent: NodeAgent
  let transport: NodeProxyTransport
  let server: ApiServer
  let listener: TlsListener

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    transport = nodeProxyTransport()
    server = createTestServer(
      { authentication: { tokens: [{ token: TOKEN, user: { username: 'admin', groups: ['system:masters'] } }], anonymous: false }, nodeAgent: nodeAgentOptions(agent, pair) },
      { proxyTransport: transport },
    )
    await server.ready
    const client = new TestClient(server)
    const node = { metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } } }
    assert.equal((await client.post('/api/v1/nodes', node)).status, 201)
    const pod = { metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'app' }] } }
    assert.equal((await client.post('/api/v1/namespaces/default/pods', pod)).status, 201)
    listener = await serveOnLoopback(server, { http2: false })
  })

  after(async () => {
    await listener?.close()
    await server?.shutdown()
    transport?.close()
    await agent?.close()
  })

  /** Opens an exec WebSocket offering `protocols`; resolves with the protocol agreed, or the status of the refusal. */
  const exec = (protocols: string[]): Promise<{ protocol: string } | { status: number }> =>
    new Promise((resolve, reject) => {
      const url = `wss://127.0.0.1:${listener.port}/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true`
      const ws = new WebSocket(url, protocols, { rejectUnauthorized: false })
      ws.once('open', () => {
        resolve({ protocol: ws.protocol })
        ws.terminate()
      })
      ws.once('unexpected-response', (_req, res) => {
        resolve({ status: res.statusCode ?? 0 })
        res.resume()
      })
      ws.once('error', reject)
    })

  it('authenticates exec with it, and passes the agent the other protocols alone', async () => {
    const before = agent.seen.length
    assert.deepEqual(await exec([V5, tokenProtocol(TOKEN)]), { protocol: V5 })
    // Offered without v5, the protocols are passed on as offered (v5 is chosen before they are): the token's is gone.
    assert.deepEqual(await exec(['v4.channel.k8s.io', tokenProtocol(TOKEN), 'channel.k8s.io']), { protocol: 'v4.channel.k8s.io' })
    const passed = agent.seen.slice(before)
    assert.deepEqual(
      passed.map((seen) => seen.headers['sec-websocket-protocol']),
      [V5, 'v4.channel.k8s.io,channel.k8s.io'],
    )
  })

  it('refuses a wrong token, one alone, one given twice and one not in base64url with 401, reaching no agent', async () => {
    const before = agent.seen.length
    for (const protocols of [
      [V5, tokenProtocol('not-the-token')],
      [tokenProtocol(TOKEN)],
      [V5, tokenProtocol(TOKEN), tokenProtocol(TOKEN) + 'x'],
    ]) {
      assert.deepEqual(await exec(protocols), { status: 401 }, protocols.join(', '))
    }
    // What a WebSocket client would not send, written by hand: an encoding other than unpadded base64url.
    for (const encoded of ['not*base64', `${Buffer.from(TOKEN).toString('base64')}==`, `${Buffer.from(TOKEN).toString('base64url')}=`]) {
      const answer = await sendRaw(
        listener.port,
        `GET /api/v1/namespaces/default/pods/web/exec?command=true&stdout=true HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ${V5}, ${PREFIX}${encoded}\r\n\r\n`,
      )
      assert.equal(answer.status, 401, encoded)
    }
    assert.equal(agent.seen.length, before)
  })

  it('is no credential on a request that is not a WebSocket upgrade', async () => {
    const answer = await sendRaw(listener.port, `GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nSec-WebSocket-Protocol: ${V5}, ${tokenProtocol(TOKEN)}\r\nConnection: close\r\n\r\n`)
    assert.equal(answer.status, 401)
  })

  it('never let the token reach the agent', () => {
    for (const seen of agent.seen) assert.doesNotMatch(JSON.stringify(seen.headers), new RegExp(`${PREFIX}|${Buffer.from(TOKEN).toString('base64url')}`))
  })
})
