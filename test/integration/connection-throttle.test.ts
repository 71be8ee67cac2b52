/**
 * `--max-connection-bytes-per-sec` on the daemon's listener with a real node
 * agent on loopback: `exec -i` over WebSocket (v5.channel.k8s.io) echoes
 * every byte of its stdin back on stdout, and the transfer cannot beat the
 * rate (a lower bound, never an upper one: the machine may be slow); a
 * pods/log answer is paced the same way. Without the flag the same exec
 * still gets every byte.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WebSocket } from 'ws'
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'
import type { ApiServer } from '../../core/server.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'
import { createTestServer, TestClient } from './harness.js'
import { type NodeAgent, startNodeAgent } from './node-agent-server.js'

const silentLogger = { debug() {}, info() {}, warn() {}, error() {} }
const TOKEN = 'throttle-admin-token'
const RATE = 20_000

/** Sends `size` bytes on stdin of an exec and resolves with what came back on stdout, and how long it took. */
function execEcho(port: number, ca: string, size: number): Promise<{ echoed: Buffer; ms: number }> {
  const url = `wss://127.0.0.1:${port}/api/v1/namespaces/default/pods/web/exec?command=cat&stdin=true&stdout=true`
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['v5.channel.k8s.io'], { ca, headers: { authorization: `Bearer ${TOKEN}` } })
    const got: Buffer[] = []
    let received = 0
    let started = 0
    const guard = setTimeout(() => {
      ws.terminate()
      reject(new Error(`exec echoed ${received} of ${size} bytes before the test gave up`))
    }, 30_000)
    ws.on('open', () => {
      started = performance.now()
      const payload = Buffer.alloc(size)
      for (let i = 0; i < size; i++) payload[i] = i % 251
      // Several frames, as a client writing a file to stdin would.
      for (let at = 0; at < size; at += 8192) ws.send(Buffer.concat([Buffer.from([0]), payload.subarray(at, at + 8192)]))
    })
    ws.on('message', (raw: Buffer) => {
      if (raw[0] !== 1) return
      got.push(raw.subarray(1))
      received += raw.length - 1
      if (received >= size) {
        const ms = performance.now() - started
        clearTimeout(guard)
        ws.terminate()
        resolve({ echoed: Buffer.concat(got), ms })
      }
    })
    ws.on('error', (err) => {
      clearTimeout(guard)
      reject(err)
    })
  })
}

describe('--max-connection-bytes-per-sec', () => {
  let agent: NodeAgent
  let transport: NodeProxyTransport
  let server: ApiServer
  let throttled: TlsListener
  let open: TlsListener
  let servingCA = ''

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    agent.logs.set(
      'default/web/app',
      Array.from({ length: 400 }, (_, i) => `log line ${String(i).padStart(4, '0')} ${'x'.repeat(90)}`),
    )
    transport = nodeProxyTransport()
    server = createTestServer(
      {
        authentication: { tokens: [{ token: TOKEN, user: { username: 'admin', groups: ['system:masters'] } }] },
        nodeAgent: {
          preferredAddressTypes: ['InternalIP'],
          caBundle: Buffer.from(agent.servingCA).toString('base64'),
          clientCertificate: { certificate: pair.certificate, key: pair.privateKey },
          timeoutMs: 5000,
          maxBytesPerSec: RATE,
        },
      },
      { proxyTransport: transport },
    )
    await server.ready
    const client = new TestClient(server)
    for (const [path, body] of [
      [
        '/api/v1/nodes',
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } } },
      ],
      ['/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'app', stdin: true }] } }],
    ] as const) {
      const reply = await client.post(path, body)
      assert.equal(reply.status, 201, reply.text)
    }
    const ca = await createCertificateAuthority({ commonName: 'serving-ca' })
    servingCA = ca.certificate
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    const base = { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger, http2: false }
    throttled = await serveTls(server, { ...base, maxConnectionBytesPerSec: RATE })
    open = await serveTls(server, base)
  })

  after(async () => {
    await throttled?.close()
    await open?.close()
    transport?.close()
    await agent?.close()
    await server?.shutdown()
  })

  it('exec -i echoes every byte, and 60 KB each way at 20 KB/s takes at least 1.5 s', async () => {
    const size = 60_000
    const { echoed, ms } = await execEcho(throttled.port, servingCA, size)
    assert.equal(echoed.length, size)
    assert.ok(echoed.every((b, i) => b === i % 251), 'the bytes came back in order')
    // At the rate, 60 000 bytes need 3 s less a 0.1 s burst; half of it is a safe floor.
    assert.ok(ms >= (size / RATE) * 1000 * 0.5, `took ${Math.round(ms)} ms`)
  })

  it('without the flag the same exec gets every byte back', async () => {
    const { echoed } = await execEcho(open.port, servingCA, 60_000)
    assert.equal(echoed.length, 60_000)
  })

  it('a pods/log answer arrives whole, no faster than the rate', async () => {
    const started = performance.now()
    const response = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/pods/web/log'))
    const text = await response.text()
    const ms = performance.now() - started
    assert.equal(response.status, 200)
    const lines = text.trimEnd().split('\n')
    assert.equal(lines.length, 400)
    assert.equal(lines[399], `log line 0399 ${'x'.repeat(90)}`)
    assert.ok(ms >= (text.length / RATE) * 1000 * 0.5, `${text.length} bytes took ${Math.round(ms)} ms`)
  })
})
