/**
 * pods/log, exec, attach and port-forward through the fetch interface, with
 * the Node runtime's transport and a real node agent over HTTPS: upstream's
 * answers for an unscheduled pod, a request that is no upgrade, a node with
 * no preferred address, a missing node and an agent's own 404; and what core
 * hands the runtime for an upgrade (the agent's URL, its CA, the client
 * certificate, the dial bound, the caller's credentials removed); an agent
 * that accepts and never answers fails the dial at the time-out.
 */
import assert from 'node:assert/strict'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import type { UpgradeHandoff } from '../../core/proxy/upgrade.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { dialTarget } from '../../runtimes/node/adapter/upgrade-passthrough.js'
import { createTestServer, TestClient } from './harness.js'
import { type NodeAgent, startNodeAgent } from './node-agent-server.js'

const node = (name: string, addresses: { type: string; address: string }[], port: number) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { addresses, daemonEndpoints: { kubeletEndpoint: { Port: port } } },
})

const pod = (name: string, nodeName?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'app', image: 'app' }] },
})

describe('pods/log and the streaming subresources through fetch', () => {
  let agent: NodeAgent
  let transport: NodeProxyTransport
  let client: TestClient
  let caBundle = ''
  let certificate = ''
  // Accepts connections and never says a word: a node agent that hangs.
  let silent: Server
  const silentSockets = new Set<Socket>()

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    certificate = pair.certificate
    agent = await startNodeAgent(clientCA.certificate)
    agent.logs.set('default/web/app', ['one', 'two'])
    caBundle = Buffer.from(agent.servingCA).toString('base64')
    silent = createServer((socket) => {
      silentSockets.add(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    transport = nodeProxyTransport()
    const server = createTestServer(
      { nodeAgent: { preferredAddressTypes: ['InternalIP'], caBundle, clientCertificate: { certificate: pair.certificate, key: pair.privateKey }, timeoutMs: 2500 } },
      { proxyTransport: transport },
    )
    await server.ready
    client = new TestClient(server)
    for (const [path, body] of [
      ['/api/v1/nodes', node('node-1', [{ type: 'InternalIP', address: '127.0.0.1' }], agent.port)],
      ['/api/v1/nodes', node('node-x', [{ type: 'ExternalIP', address: '203.0.113.9' }, { type: 'Hostname', address: 'x' }], agent.port)],
      ['/api/v1/nodes', node('node-silent', [{ type: 'InternalIP', address: '127.0.0.1' }], (silent.address() as AddressInfo).port)],
      ['/api/v1/namespaces/default/pods', pod('web', 'node-1')],
      ['/api/v1/namespaces/default/pods', pod('hung', 'node-silent')],
      ['/api/v1/namespaces/default/pods', pod('pending')],
      ['/api/v1/namespaces/default/pods', pod('elsewhere', 'node-x')],
      ['/api/v1/namespaces/default/pods', pod('orphan', 'node-gone')],
    ] as const) {
      const reply = await client.post(path, body)
      assert.equal(reply.status, 201, reply.text)
    }
  })

  after(async () => {
    transport?.close()
    await agent?.close()
    for (const socket of silentSockets) socket.destroy()
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()))
  })

  it('reads a log, and an unscheduled pod\'s log is empty', async () => {
    const log = await client.get('/api/v1/namespaces/default/pods/web/log?timestamps=true')
    assert.equal(log.status, 200)
    assert.equal(log.headers.get('content-type'), 'text/plain')
    assert.equal(log.text, 'one\ntwo\n')
    const pending = await client.get('/api/v1/namespaces/default/pods/pending/log')
    assert.equal(pending.status, 200)
    assert.equal(pending.text, '')
  })

  it('turns the agent\'s own refusal into upstream\'s generic answer', async () => {
    agent.logs.delete('default/web/app')
    try {
      const reply = await client.get('/api/v1/namespaces/default/pods/web/log')
      assert.equal(reply.status, 404)
      assert.equal(reply.body.reason, 'NotFound')
      assert.equal(reply.body.message, 'the server could not find the requested resource ( pods/log web)')
      assert.deepEqual(reply.body.details, { name: 'web', kind: 'pods/log' })
    } finally {
      agent.logs.set('default/web/app', ['one', 'two'])
    }
  })

  it("refuses to follow the agent's redirect, as upstream's log streamer does", async () => {
    agent.redirects.add('default/web/app')
    try {
      const reply = await client.get('/api/v1/namespaces/default/pods/web/log')
      assert.equal(reply.status, 500)
      assert.match(reply.body.message, /^Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/web\/app": redirects forbidden$/)
      assert.equal(reply.headers.get('location'), null)
    } finally {
      agent.redirects.delete('default/web/app')
    }
  })

  it('names the node\'s addresses when none is of a preferred type, and a missing node as NotFound', async () => {
    const reply = await client.get('/api/v1/namespaces/default/pods/elsewhere/log')
    assert.equal(reply.status, 500)
    assert.equal(reply.body.message, 'no preferred addresses found; known addresses: [{ExternalIP 203.0.113.9} {Hostname x}]')
    const orphan = await client.get('/api/v1/namespaces/default/pods/orphan/log')
    assert.equal(orphan.status, 404)
    assert.equal(orphan.body.message, 'nodes "node-gone" not found')
  })

  it('refuses exec that is no upgrade, and exec on a pod without a node', async () => {
    const plain = await client.post('/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=true', '')
    assert.equal(plain.status, 400)
    assert.equal(plain.body.message, 'Upgrade request required')
    const pending = await client.post('/api/v1/namespaces/default/pods/pending/exec?command=ls&stdout=true', '')
    assert.equal(pending.status, 400)
    assert.equal(pending.body.message, 'pod pending does not have a host assigned')
  })

  it('answers a HEAD of exec, attach or port-forward with 405, as upstream routes them for GET and POST alone', async () => {
    const seen = agent.seen.length
    for (const sub of ['exec?command=ls&stdout=true', 'attach?stdout=true', 'portforward?ports=80']) {
      const reply = await client.call('HEAD', `/api/v1/namespaces/default/pods/web/${sub}`, { headers: { connection: 'Upgrade', upgrade: 'websocket' } })
      assert.equal(reply.status, 405, sub)
    }
    assert.equal(agent.seen.length, seen, 'the node agent was reached')
  })

  it('says so when the runtime cannot pass an upgrade through', async () => {
    const reply = await client.get('/api/v1/namespaces/default/pods/web/attach?stdout=true', { headers: { connection: 'Upgrade', upgrade: 'websocket' } })
    assert.equal(reply.status, 400)
    assert.equal(reply.body.message, 'this server cannot pass connection upgrades through on this runtime')
  })

  it('hands the runtime the agent\'s address, trust and client certificate, without the caller\'s credentials', async () => {
    const handed: UpgradeHandoff[] = []
    const headers = { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'portforward.k8s.io', 'impersonate-user': 'someone' }
    const connection = { passUpgrade: (h: UpgradeHandoff) => void handed.push(h) }
    // An embedded caller without credentials is the administrator; impersonating still works and is not passed on.
    const reply = await client.call('POST', '/api/v1/namespaces/default/pods/web/portforward?ports=8080,9090', { headers, connection: { ...connection, clientCertificate: { verified: true, commonName: 'admin', organizations: ['system:masters'] } } })
    assert.equal(reply.status, 200, reply.text)
    assert.equal(handed.length, 1)
    const [h] = handed
    assert.equal(h!.target.origin, `https://127.0.0.1:${agent.port}`)
    assert.equal(h!.target.caBundle, caBundle)
    assert.equal(h!.target.clientCertificate?.certificate, certificate)
    assert.equal(h!.target.dialTimeoutMs, 2500)
    assert.equal(h!.request.method, 'POST')
    assert.equal(h!.request.path, '/portForward/default/web?port=8080&port=9090')
    assert.equal(h!.request.headers.get('upgrade'), 'SPDY/3.1')
    assert.equal(h!.request.headers.get('connection'), 'Upgrade')
    assert.equal(h!.request.headers.get('impersonate-user'), null)
  })

  it('an agent that accepts and never answers TLS fails the dial within --nodeagent-timeout, for logs and for upgrades', async () => {
    const reply = await client.get('/api/v1/namespaces/default/pods/hung/log')
    assert.equal(reply.status, 500)
    assert.match(reply.body.message, /^Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/hung\/app": dial tcp 127\.0\.0\.1:\d+: i\/o timeout$/)
    const port = (silent.address() as AddressInfo).port
    await assert.rejects(
      dialTarget({ target: { origin: `https://127.0.0.1:${port}`, caBundle, dialTimeoutMs: 300 }, request: { method: 'GET', path: '/exec', headers: new Headers() } }),
      { message: `dial tcp 127.0.0.1:${port}: i/o timeout` },
    )
  })
})
