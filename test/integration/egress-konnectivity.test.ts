/**
 * The GRPC egress transport against a konnectivity-protocol server on a
 * unix socket: a node agent is reached through it (nodes/proxy, and the dial
 * of an exec/attach upgrade, TLS spoken to the agent inside the stream); a
 * dial the proxy refuses fails with its error and the agent is not reached.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import { egressProxies, loadEgressSelectorConfiguration } from '../../core/config/egress-selector.js'
import { agentTarget } from '../../core/nodeagent/connection.js'
import type { NodeAgentOptions } from '../../core/nodeagent/connection.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import type { UpgradeHandoff } from '../../core/proxy/upgrade.js'
import { egressDialers } from '../../runtimes/node/adapter/egress-dialer.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { dialTarget } from '../../runtimes/node/adapter/upgrade-passthrough.js'
import { createTestServer, TestClient } from './harness.js'
import { type KonnectivityServer, startKonnectivityServer } from './konnectivity-server.js'
import { type NodeAgent, startNodeAgent } from './node-agent-server.js'

describe('egress selection through a konnectivity (GRPC) proxy', () => {
  let dir: string
  let agent: NodeAgent
  let konnectivity: KonnectivityServer
  let transport: NodeProxyTransport
  let client: TestClient
  let options: NodeAgentOptions
  let dialers: Awaited<ReturnType<typeof egressDialers>>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egress-grpc-'))
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    konnectivity = await startKonnectivityServer(join(dir, 'konnectivity.sock'))
    const config = loadEgressSelectorConfiguration(
      `apiVersion: apiserver.k8s.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n- name: cluster\n  connection:\n    proxyProtocol: GRPC\n    transport: {uds: {udsName: ${konnectivity.socketPath}}}\n`,
      'egress.yaml',
    )
    dialers = await egressDialers(egressProxies(config))
    transport = nodeProxyTransport(dialers)
    options = {
      preferredAddressTypes: ['InternalIP'],
      caBundle: Buffer.from(agent.servingCA).toString('base64'),
      clientCertificate: { certificate: pair.certificate, key: pair.privateKey },
      timeoutMs: 5000,
    }
    const server = createTestServer({ nodeAgent: options }, { proxyTransport: transport, checkProxyable: async () => {} })
    await server.ready
    client = new TestClient(server)
    const node = await client.post('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
    })
    assert.equal(node.status, 201, node.text)
  })

  after(async () => {
    transport?.close()
    await agent?.close()
    await konnectivity?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('reaches a node agent through the konnectivity stream, with the node-agent client certificate inside it', async () => {
    const healthz = await client.get('/api/v1/nodes/node-1/proxy/healthz')
    assert.equal(healthz.status, 200, healthz.text)
    assert.equal(healthz.text, 'ok')
    assert.ok(konnectivity.dials.includes(`127.0.0.1:${agent.port}`), JSON.stringify(konnectivity.dials))
    assert.equal(agent.seen.at(-1)?.clientCommonName, 'apiserver-node-client')
  })

  it('dials an upgrade through the konnectivity stream and verifies the agent inside it', async () => {
    const before = konnectivity.dials.length
    const handoff = { target: agentTarget(options, '127.0.0.1', agent.port), request: { method: 'GET', path: '/', headers: new Headers(), body: null } } as UpgradeHandoff
    const socket = await dialTarget(handoff, dialers)
    try {
      assert.equal((socket as TLSSocket).authorized, true)
      assert.equal(konnectivity.dials.length, before + 1)
    } finally {
      socket.destroy()
    }
  })

  it('fails with the proxy\'s error when it refuses the dial, the agent not reached', async () => {
    const seen = agent.seen.length
    konnectivity.refused.add(`127.0.0.1:${agent.port}`)
    transport.close()
    try {
      const reply = await client.get('/api/v1/nodes/node-1/proxy/healthz')
      assert.ok(reply.status >= 500, `${reply.status} ${reply.text}`)
      assert.match(reply.body.message, /dial 127\.0\.0\.1:\d+ through proxy ".*konnectivity\.sock" failed: dial refused by the test proxy/)
      assert.equal(agent.seen.length, seen)
    } finally {
      konnectivity.refused.clear()
    }
  })
})
