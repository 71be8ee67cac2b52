/**
 * The proxy subresources through the fetch interface, with the Node
 * runtime's transport and a real node agent over HTTPS on loopback:
 * nodes/proxy reaches the agent's own paths presenting the node-agent client
 * certificate (every verb, body and query kept, the caller's credentials
 * dropped) or another port of the node over plain HTTP; services/proxy
 * reaches a ready endpoint of the Service's EndpointSlices by port number or
 * name; pods/proxy refuses a loopback pod IP as upstream does, and nodes/proxy
 * a loopback node at any port but its agent's own. The
 * proxyable-host check is opened for loopback here only because every test
 * server must live on loopback; the daemon's check is in node-agent.test.ts.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { connect, type TLSSocket } from 'node:tls'
import { gunzipSync, gzipSync } from 'node:zlib'
import { silentLogger } from '../../core/logging/logger.js'
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'
import type { UpgradeHandoff } from '../../core/proxy/upgrade.js'
import type { ApiServer } from '../../core/server.js'
import { serveTls } from '../../runtimes/node/adapter/serve.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { createTestServer, TestClient } from './harness.js'
import { type NodeAgent, nodeAgentOptions, startNodeAgent } from './node-agent-server.js'

/** The pod's address (TEST-NET-1): on the cluster network, which here is the loopback backend, since no slice may name a loopback address. */
const POD_IP = '192.0.2.10'

describe('proxy subresources', () => {
  let agent: NodeAgent
  let backend: Server
  let backendPort = 0
  let transport: NodeProxyTransport
  let client: TestClient
  let apiServer: ApiServer
  /** The backend's switched connections. */
  const upgraded = new Set<Duplex>()
  const backendSeen: { method: string; url: string; authorization?: string }[] = []

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    backend = createServer((req, res) => {
      backendSeen.push({ method: req.method ?? '', url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) })
      if (req.url === '/forwarded/') {
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ uri: req.headers['x-forwarded-uri'], for: req.headers['x-forwarded-for'] }))
      }
      // An HTML page linking to the backend's own paths, as it is and gzipped.
      if (req.url === '/page' || req.url === '/page.gz') {
        const page = Buffer.from('<html><body><a href="/docs/">docs</a> <img src="/logo.png"> <a href="https://example.com/">out</a> <p>/plain</p></body></html>')
        const gzipped = req.url === '/page.gz'
        const body = gzipped ? gzipSync(page) : page
        return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...(gzipped ? { 'content-encoding': 'gzip' } : {}) }).end(body)
      }
      // A backend that redirects to its own page and would let any origin read the answer with the caller's credentials.
      if (req.url === '/old') {
        return res.writeHead(302, { location: '/new?x=1', 'access-control-allow-origin': 'https://evil.example', 'access-control-allow-credentials': 'true' }).end()
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`backend ${req.method} ${req.url}`)
    })
    // A WebSocket-style backend: switches protocols, then echoes what comes, naming the path and whether credentials came.
    backend.on('upgrade', (req, socket: Duplex) => {
      upgraded.add(socket)
      socket.on('error', () => {})
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
      socket.write(`upgraded ${req.url} authorization=${req.headers.authorization ?? 'none'}\n`)
      socket.on('data', (d: Buffer) => socket.write(`echo ${d.toString()}`))
    })
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve))
    backendPort = (backend.address() as AddressInfo).port
    transport = nodeProxyTransport()
    const server = createTestServer(
      {
        nodeAgent: nodeAgentOptions(agent, pair),
        // A caller's own token, which must not reach any backend; requests through the Node listener need it.
        authentication: { tokens: [{ token: 'secret', user: { username: 'admin', groups: ['system:masters'] } }] },
      },
      { proxyTransport: { roundTrip: (target, request) => transport.roundTrip({ ...target, origin: target.origin.replace(POD_IP, '127.0.0.1') }, request) }, checkProxyable: async () => {} },
    )
    await server.ready
    apiServer = server
    client = new TestClient(server)
    const created = await Promise.all([
      client.post('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'node-1' },
        status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
      }),
      client.post('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0' },
        spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'web', ports: [{ containerPort: backendPort }] }] },
      }),
      client.post('/api/v1/namespaces/default/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { ports: [{ name: 'http', port: 80, targetPort: backendPort }] },
      }),
      client.post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [POD_IP], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: 'default', name: 'web-0' } }],
        ports: [{ name: 'http', port: backendPort, protocol: 'TCP' }],
      }),
    ])
    for (const reply of created) assert.equal(reply.status, 201, reply.text)
    const status = await client.patch('/api/v1/namespaces/default/pods/web-0/status', { status: { podIP: POD_IP, podIPs: [{ ip: POD_IP }] } }, 'application/merge-patch+json')
    assert.equal(status.status, 200, status.text)
  })

  after(async () => {
    transport?.close()
    await agent?.close()
    for (const socket of upgraded) socket.destroy()
    backend?.closeAllConnections()
    await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()))
  })

  it('nodes/proxy reaches the agent with the client certificate, every verb with its body and query', async () => {
    const healthz = await client.get('/api/v1/nodes/node-1/proxy/healthz')
    assert.equal(healthz.status, 200)
    assert.equal(healthz.text, 'ok')
    const posted = await client.call('POST', '/api/v1/nodes/node-1/proxy/echo?x=1', { body: 'payload', headers: { 'content-type': 'text/plain' } })
    assert.equal(posted.text, 'POST ?x=1 payload')
    const put = await client.call('PUT', '/api/v1/nodes/node-1/proxy/echo', { body: 'again', headers: { 'content-type': 'text/plain' } })
    assert.equal(put.text, 'PUT  again')
    const seen = agent.seen.filter((r) => r.path === '/healthz' || r.path.startsWith('/echo'))
    assert.equal(seen.length, 3)
    assert.ok(seen.every((r) => r.clientCommonName === 'apiserver-node-client'))
    const missing = await client.get('/api/v1/nodes/node-1/proxy/nothing-here')
    assert.equal(missing.status, 404)
    assert.equal(missing.text, '404 page not found')
  })

  it('nodes/proxy to another port of the node goes over plain HTTP to that port', async () => {
    const reply = await client.get(`/api/v1/nodes/node-1:${backendPort}/proxy/metrics?a=b`)
    assert.equal(reply.status, 200)
    assert.equal(reply.text, 'backend GET /metrics?a=b')
  })

  it('services/proxy reaches a ready endpoint by port number or name', async () => {
    assert.equal((await client.get('/api/v1/namespaces/default/services/web:80/proxy/hello?q=1')).text, 'backend GET /hello?q=1')
    assert.equal((await client.call('DELETE', '/api/v1/namespaces/default/services/web:http/proxy/item/7')).text, 'backend DELETE /item/7')
    const noPort = await client.get('/api/v1/namespaces/default/services/web:81/proxy/')
    assert.equal(noPort.status, 503)
    assert.equal(noPort.body.message, 'no service port 81 found for service "web"')
    const ghost = await client.get('/api/v1/namespaces/default/services/ghost/proxy/')
    assert.equal(ghost.status, 404)
    assert.equal(ghost.body.message, 'services "ghost" not found')
    const spec = { ports: [{ name: 'http', port: 80 }] }
    assert.equal((await client.post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lonely' }, spec })).status, 201)
    const none = await client.get('/api/v1/namespaces/default/services/lonely/proxy/')
    assert.equal(none.status, 503)
    assert.equal(none.body.message, 'no endpoints available for service "lonely"')
  })

  it('sends a proxied path that reads as a host to the backend as a path, joined and cleaned as upstream does', async () => {
    const elsewhereSeen: string[] = []
    const elsewhere = createServer((req, res) => {
      elsewhereSeen.push(req.url ?? '')
      res.end('elsewhere')
    })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    try {
      const port = (elsewhere.address() as AddressInfo).port
      const reply = await client.get(`/api/v1/namespaces/default/services/web:80/proxy//127.0.0.1:${port}/secret?x=1`)
      assert.equal(reply.text, `backend GET /127.0.0.1:${port}/secret?x=1`)
      assert.deepEqual(elsewhereSeen, [], 'the path named the host the request went to')
      assert.equal((await client.get('/api/v1/namespaces/default/services/web:80/proxy/a//b/../c/')).text, 'backend GET /a/c/')
      const bare = await client.get('/api/v1/namespaces/default/services/web:80/proxy?q=1')
      assert.equal(bare.status, 301, 'nothing after proxy: sent to proxy/, as upstream')
      assert.equal(bare.headers.get('location'), '/api/v1/namespaces/default/services/web:80/proxy/?q=1')
      assert.equal((await client.call('POST', '/api/v1/namespaces/default/services/web:80/proxy')).text, 'backend POST /')
    } finally {
      elsewhere.closeAllConnections()
      await new Promise((resolve) => elsewhere.close(resolve))
    }
  })

  it("tells the backend the path asked for and the client's address, as upstream's proxy transport does", async () => {
    const reply = await client.call('GET', '/api/v1/namespaces/default/services/web:http/proxy/forwarded/', {
      headers: { 'x-forwarded-for': '198.51.100.1', authorization: 'Bearer secret' },
      connection: { remoteAddress: '::ffff:192.0.2.7' },
    })
    assert.equal(reply.status, 200, reply.text)
    assert.deepEqual(JSON.parse(reply.text), { uri: '/api/v1/namespaces/default/services/web:http/proxy/forwarded/', for: '198.51.100.1, 192.0.2.7' })
  })

  it("sends the backend's redirect to its own page back through the proxy, and drops its CORS headers", async () => {
    const reply = await client.get('/api/v1/namespaces/default/services/web:http/proxy/old')
    assert.equal(reply.status, 302)
    assert.equal(reply.headers.get('location'), '/api/v1/namespaces/default/services/web:http/proxy/new?x=1')
    assert.equal(reply.headers.get('access-control-allow-origin'), null)
    assert.equal(reply.headers.get('access-control-allow-credentials'), null)
  })

  it("sends an HTML page's links to the backend's own paths through the proxy, the page gzipped or not, as upstream's proxy transport", async () => {
    const prefix = '/api/v1/namespaces/default/services/web:http/proxy'
    const expected = `<html><body><a href="${prefix}/docs/">docs</a> <img src="${prefix}/logo.png"> <a href="https://example.com/">out</a> <p>/plain</p></body></html>`
    const plain = await client.get(`${prefix}/page`)
    assert.equal(plain.status, 200)
    assert.equal(plain.text, expected)
    assert.equal(plain.headers.get('content-length'), null, "the backend's length is not the page's any more")
    const gzipped = await apiServer.fetch(new Request(`http://in-process${prefix}/page.gz`, { headers: { 'accept-encoding': 'gzip', authorization: 'Bearer secret' } }), {})
    assert.equal(gzipped.status, 200)
    assert.equal(gzipped.headers.get('content-encoding'), 'gzip')
    assert.equal(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString(), expected)
  })

  it('hands an upgrade through services and nodes proxy to the backend, with the path joined and no credentials', async () => {
    const handed: UpgradeHandoff[] = []
    const connection = { passUpgrade: (h: UpgradeHandoff) => void handed.push(h) }
    const headers = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: 'Bearer secret', 'impersonate-user': 'someone' }
    for (const path of [
      // (pods/proxy takes the same path to the same pod.)
      '/api/v1/namespaces/default/services/web:http/proxy/ws/a/../b?x=1',
      `/api/v1/nodes/node-1:${backendPort}/proxy/ws/b?x=1`,
    ]) {
      const reply = await client.call('GET', path, { headers, connection })
      assert.equal(reply.status, 200, reply.text)
    }
    assert.equal(handed.length, 2)
    assert.deepEqual(handed.map((h) => h.target.origin), [`http://${POD_IP}:${backendPort}`, `http://127.0.0.1:${backendPort}`])
    for (const h of handed) {
      assert.equal(h.request.path, '/ws/b?x=1')
      assert.equal(h.request.headers.get('upgrade'), 'websocket')
      assert.equal(h.request.headers.get('sec-websocket-key'), 'dGhlIHNhbXBsZSBub25jZQ==')
      assert.equal(h.request.headers.get('authorization'), null)
      assert.equal(h.request.headers.get('impersonate-user'), null)
    }
  })

  /** A TLS connection to the server on a Node listener of its own, with what it has read so far. */
  async function connectThroughListener(): Promise<{ socket: TLSSocket; arrived: (text: string) => Promise<string>; close: () => Promise<void> }> {
    const ca = await createCertificateAuthority({ commonName: 'proxy-upgrade-ca' })
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: [], ipAddresses: ['127.0.0.1'] })
    const listener = await serveTls(apiServer, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
    const socket = connect({ host: '127.0.0.1', port: listener.port, ca: ca.certificate })
    await once(socket, 'secureConnect')
    let got = ''
    socket.on('data', (d: Buffer) => (got += d.toString()))
    const arrived = async (text: string) => {
      for (let i = 0; i < 500 && !got.includes(text); i++) await new Promise((r) => setTimeout(r, 10))
      assert.ok(got.includes(text), `waited for ${JSON.stringify(text)}, got ${JSON.stringify(got)}`)
      return got
    }
    return { socket, arrived, close: async () => (socket.destroy(), await listener.close()) }
  }
  const upgradeRequest = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer secret\r\n\r\n`

  it("splices a WebSocket through nodes/proxy on the Node listener, as upstream's upgrade-aware proxy does", async () => {
    const { socket, arrived, close } = await connectThroughListener()
    try {
      // Through the node (on loopback) rather than the service: the splice dials the address itself.
      socket.write(upgradeRequest(`/api/v1/nodes/node-1:${backendPort}/proxy/chat`))
      assert.match(await arrived('upgraded /chat authorization=none\n'), /^HTTP\/1\.1 101 Switching Protocols\r\n/)
      socket.write('hello')
      await arrived('echo hello')
    } finally {
      await close()
    }
  })

  it('closes both connections once the client is done sending, as upstream does, though the backend stays quiet', async () => {
    // A backend that keeps its side open after its peer's end, and never writes again.
    const quietSockets = new Set<Socket>()
    let ended = 0
    const quiet = createTcpServer({ allowHalfOpen: true }, (socket) => {
      quietSockets.add(socket)
      socket.on('error', () => {})
      socket.on('end', () => ended++)
      socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nready\n'))
    })
    await new Promise<void>((resolve) => quiet.listen(0, '127.0.0.1', resolve))
    const { socket, arrived, close } = await connectThroughListener()
    try {
      socket.write(upgradeRequest(`/api/v1/nodes/node-1:${(quiet.address() as AddressInfo).port}/proxy/stream`))
      await arrived('ready\n')
      let closedByServer = false
      socket.once('end', () => (closedByServer = true))
      socket.end()
      for (let i = 0; i < 300 && !(closedByServer && ended); i++) await new Promise((r) => setTimeout(r, 10))
      assert.equal(ended, 1, 'the backend was told the client is done')
      assert.ok(closedByServer, 'the server kept the client connection open for as long as the backend stays quiet')
    } finally {
      await close()
      for (const s of quietSockets) s.destroy()
      await new Promise((resolve) => quiet.close(resolve))
    }
  })

  it('answers 503 when a backend switches protocols on a request that asked for no upgrade, instead of waiting for ever', async () => {
    const switcher = createServer()
    switcher.on('request', (_req, res) => {
      // Node's server would not send a 101 through the response: written by hand on the socket.
      res.socket?.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
    })
    await new Promise<void>((resolve) => switcher.listen(0, '127.0.0.1', resolve))
    try {
      const port = (switcher.address() as AddressInfo).port
      const reply = await client.get(`/api/v1/nodes/node-1:${port}/proxy/anything`)
      assert.equal(reply.status, 503)
      assert.equal(reply.body.message, 'error trying to reach service: backend tried to switch protocol "websocket" when "" was requested')
    } finally {
      switcher.closeAllConnections()
      await new Promise((resolve) => switcher.close(resolve))
    }
  })

  it('refuses a port that is not a number with 503 before anything is dialled, so it cannot carry another host', async () => {
    const before = backendSeen.length
    // Put after the node's address, `80@host` would make the origin's host `host`.
    const reply = await client.get(`/api/v1/nodes/http:node-1:${backendPort}@127.0.0.2/proxy/metrics`)
    assert.equal(reply.status, 503)
    assert.equal(reply.body.message, `error trying to reach service: dial tcp: lookup tcp/${backendPort}@127.0.0.2: unknown port`)
    const big = await client.get('/api/v1/nodes/node-1:99999/proxy/metrics')
    assert.equal(big.status, 503)
    assert.equal(big.body.message, 'error trying to reach service: dial tcp: address 99999: invalid port')
    assert.equal(backendSeen.length, before)
  })

  it('pods/proxy refuses a pod whose IP is not global unicast, and nothing is sent', async () => {
    const before = backendSeen.length
    const local = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'local-0' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'web' }] } }
    assert.equal((await client.post('/api/v1/namespaces/default/pods', local)).status, 201)
    const status = await client.patch('/api/v1/namespaces/default/pods/local-0/status', { status: { podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }] } }, 'application/merge-patch+json')
    assert.equal(status.status, 200, status.text)
    const reply = await client.get('/api/v1/namespaces/default/pods/local-0/proxy/')
    assert.equal(reply.status, 400)
    assert.equal(reply.body.message, 'address not allowed')
    assert.equal(backendSeen.length, before)
    const bad = await client.get('/api/v1/namespaces/default/pods/ftp:web-0:21/proxy/')
    assert.equal(bad.status, 400)
    assert.equal(bad.body.message, 'invalid pod request "ftp:web-0:21"')
  })

  it('an unreachable node is a 503 naming the dial error, never a hung request', async () => {
    const reply = await client.get('/api/v1/nodes/node-1:1/proxy/')
    assert.equal(reply.status, 503)
    assert.match(reply.body.message, /^error trying to reach service: dial tcp 127\.0\.0\.1:1: connect: connection refused/)
  })
})

describe('nodes/proxy to a node agent on loopback, with the default address check', () => {
  let agent: NodeAgent
  let backend: Server
  let backendPort = 0
  let backendCalls = 0
  let transport: NodeProxyTransport
  let client: TestClient

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    backend = createServer((_req, res) => {
      backendCalls++
      res.end('backend')
    })
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve))
    backendPort = (backend.address() as AddressInfo).port
    transport = nodeProxyTransport()
    // No checkProxyable port: the core's own rule (IP literals must be global unicast) decides.
    const server = createTestServer(
      {
        nodeAgent: nodeAgentOptions(agent, pair),
      },
      { proxyTransport: transport },
    )
    await server.ready
    client = new TestClient(server)
    const node = await client.post('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'kwok-1' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
    })
    assert.equal(node.status, 201, node.text)
  })

  after(async () => {
    transport?.close()
    await agent?.close()
    backend?.closeAllConnections()
    await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()))
  })

  // As upstream's: the node's address is judged before its port, even with a CA verifying the agents (which may
  // also have signed this server's own certificate: a kubelet naming 127.0.0.1 and this server's port would
  // have had the proxy reach this server with the agents' client certificate).
  it("refuses the agent's own port on a loopback address too, named or not, and nothing is sent", async () => {
    const before = agent.seen.length
    for (const path of ['/api/v1/nodes/kwok-1/proxy/healthz', `/api/v1/nodes/kwok-1:${agent.port}/proxy/healthz`]) {
      const reply = await client.get(path)
      assert.equal(reply.status, 400, reply.text)
      assert.equal(reply.body.message, 'address not allowed')
    }
    assert.equal(agent.seen.length, before)
  })

  it('refuses another port on the loopback address with 400 "address not allowed", and nothing is sent', async () => {
    const reply = await client.get(`/api/v1/nodes/kwok-1:${backendPort}/proxy/metrics`)
    assert.equal(reply.status, 400)
    assert.equal(reply.body.kind, 'Status')
    assert.equal(reply.body.reason, 'BadRequest')
    assert.equal(reply.body.message, 'address not allowed')
    assert.equal(backendCalls, 0)
  })
})

describe('nodes/proxy to a loopback node without a CA for the agents', () => {
  it("refuses the agent's own port too, as any local service could answer in an unverified agent's place", async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    const agent = await startNodeAgent(clientCA.certificate)
    const transport = nodeProxyTransport()
    try {
      const { caBundle: _verified, ...unverified } = nodeAgentOptions(agent, pair)
      const server = createTestServer({ nodeAgent: unverified }, { proxyTransport: transport })
      await server.ready
      const client = new TestClient(server)
      const node = await client.post('/api/v1/nodes', {
        metadata: { name: 'local-1' },
        status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
      })
      assert.equal(node.status, 201, node.text)
      for (const path of ['/api/v1/nodes/local-1/proxy/healthz', `/api/v1/nodes/local-1:${agent.port}/proxy/healthz`]) {
        const reply = await client.get(path)
        assert.equal(reply.status, 400, reply.text)
        assert.equal(reply.body.message, 'address not allowed')
      }
      assert.equal(agent.seen.length, 0)
    } finally {
      transport.close()
      await agent.close()
    }
  })
})
