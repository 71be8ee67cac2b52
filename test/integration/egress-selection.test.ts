/**
 * Egress selection through real HTTP CONNECT proxies on loopback: the
 * `cluster` selection over TLS to a proxy that demands the configured
 * client certificate, `controlplane` over a unix socket. A node agent
 * (nodes/proxy, and the dial of an exec/attach upgrade) is reached through
 * the cluster proxy, a webhook named by URL through the control-plane one;
 * each proxy records the CONNECT targets. A proxy that refuses or is gone
 * fails the call with its words, and nothing reaches the target around it.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { egressProxies, loadEgressSelectorConfiguration } from '../../core/config/egress-selector.js'
import { agentTarget } from '../../core/nodeagent/connection.js'
import type { UpgradeHandoff } from '../../core/proxy/upgrade.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { egressDialers } from '../../runtimes/node/adapter/egress-dialer.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { dialTarget } from '../../runtimes/node/adapter/upgrade-passthrough.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, answer, startAdmissionWebhook } from './admission-webhook-server.js'
import { type ConnectProxy, startTlsConnectProxy, startUnixConnectProxy } from './connect-proxy.js'
import { createTestServer, eventually, TestClient } from './harness.js'
import { type NodeAgent, startNodeAgent } from './node-agent-server.js'

describe('egress selection through HTTP CONNECT proxies', () => {
  let dir: string
  let agent: NodeAgent
  let clusterProxy: ConnectProxy
  let controlPlaneProxy: ConnectProxy
  let webhook: AdmissionWebhookServer
  let transport: NodeProxyTransport
  let webhookClient: NodeWebhookClient
  let client: TestClient
  let nodeAgentOptions: Parameters<typeof agentTarget>[0]
  let dialers: Awaited<ReturnType<typeof egressDialers>>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egress-'))
    const nodeClientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const nodePair = await issueClientCertificate(nodeClientCA, { commonName: 'apiserver-node-client', organizations: [] })
    const egressCA = await createCertificateAuthority({ commonName: 'egress-client-ca' })
    const egressPair = await issueClientCertificate(egressCA, { commonName: 'apiserver-egress-client', organizations: [] })
    agent = await startNodeAgent(nodeClientCA.certificate)
    clusterProxy = await startTlsConnectProxy(egressCA.certificate)
    controlPlaneProxy = await startUnixConnectProxy(join(dir, 'proxy.sock'))
    webhook = await startAdmissionWebhook()
    writeFileSync(join(dir, 'proxy-ca.crt'), clusterProxy.servingCA!)
    writeFileSync(join(dir, 'client.crt'), egressPair.certificate)
    writeFileSync(join(dir, 'client.key'), egressPair.privateKey)
    const config = loadEgressSelectorConfiguration(
      [
        'apiVersion: apiserver.k8s.io/v1',
        'kind: EgressSelectorConfiguration',
        'egressSelections:',
        '- name: cluster',
        '  connection:',
        '    proxyProtocol: HTTPConnect',
        '    transport:',
        '      tcp:',
        `        url: ${clusterProxy.address}`,
        `        tlsConfig: {caBundle: ${join(dir, 'proxy-ca.crt')}, clientCert: ${join(dir, 'client.crt')}, clientKey: ${join(dir, 'client.key')}}`,
        '- name: controlplane',
        '  connection:',
        '    proxyProtocol: HTTPConnect',
        `    transport: {uds: {udsName: ${controlPlaneProxy.address}}}`,
        '- name: etcd',
        '  connection: {proxyProtocol: Direct}',
        '',
      ].join('\n'),
      'egress.yaml',
    )
    dialers = await egressDialers(egressProxies(config))
    transport = nodeProxyTransport(dialers)
    webhookClient = nodeWebhookClient(dialers)
    nodeAgentOptions = {
      preferredAddressTypes: ['InternalIP'],
      caBundle: Buffer.from(agent.servingCA).toString('base64'),
      clientCertificate: { certificate: nodePair.certificate, key: nodePair.privateKey },
      timeoutMs: 5000,
    }
    const server = createTestServer(
      { nodeAgent: nodeAgentOptions, admission: { plugins: ['ValidatingAdmissionWebhook'] } },
      { proxyTransport: transport, webhookClient, checkProxyable: async () => {} },
    )
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
    webhookClient?.close()
    await agent?.close()
    await clusterProxy?.close()
    await controlPlaneProxy?.close()
    await webhook?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('reaches a node agent through the cluster proxy, presenting the egress client certificate to the proxy and the node-agent one to the agent', async () => {
    const seen = agent.seen.length
    const healthz = await client.get('/api/v1/nodes/node-1/proxy/healthz')
    assert.equal(healthz.status, 200, healthz.text)
    assert.equal(healthz.text, 'ok')
    assert.ok(
      clusterProxy.connects.some((c) => c.target === `127.0.0.1:${agent.port}` && c.clientCommonName === 'apiserver-egress-client'),
      JSON.stringify(clusterProxy.connects),
    )
    assert.equal(agent.seen.slice(seen).at(-1)?.clientCommonName, 'apiserver-node-client')
    assert.deepEqual(controlPlaneProxy.connects, [], 'node-agent traffic never goes over the control-plane selection')
  })

  it('dials an exec/attach upgrade through the cluster proxy and speaks TLS to the agent inside the tunnel', async () => {
    const before = clusterProxy.connects.length
    const handoff = { target: agentTarget(nodeAgentOptions, '127.0.0.1', agent.port), request: { method: 'GET', path: '/', headers: new Headers(), body: null } } as UpgradeHandoff
    const socket = await dialTarget(handoff, dialers)
    try {
      assert.equal((socket as import('node:tls').TLSSocket).authorized, true)
      assert.equal(clusterProxy.connects.length, before + 1)
      assert.equal(clusterProxy.connects.at(-1)?.target, `127.0.0.1:${agent.port}`)
    } finally {
      socket.destroy()
    }
  })

  it('calls a webhook named by URL through the control-plane proxy on its unix socket', async () => {
    webhook.handlers.set('/check', (review) => answer(review, {}))
    const config = await client.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      metadata: { name: 'egress-check' },
      webhooks: [
        {
          name: 'check.example.com',
          clientConfig: { url: `${webhook.base}/check`, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    })
    assert.equal(config.status, 201, config.text)
    await eventually('the webhook is called', async () => {
      const before = webhook.received.length
      await client.post('/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'probe' } })
      return webhook.received.length > before
    })
    const created = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'through-proxy' } })
    assert.equal(created.status, 201, created.text)
    assert.ok(controlPlaneProxy.connects.some((c) => c.target === `127.0.0.1:${webhook.port}`), JSON.stringify(controlPlaneProxy.connects))
    assert.ok(!clusterProxy.connects.some((c) => c.target === `127.0.0.1:${webhook.port}`), 'a URL webhook is not cluster traffic')
  })

  it('fails a node-agent request the proxy refuses with the proxy\'s answer, never dialling around it', async () => {
    const seen = agent.seen.length
    clusterProxy.refused.add(`127.0.0.1:${agent.port}`)
    try {
      transport.close()
      const reply = await client.get('/api/v1/nodes/node-1/proxy/healthz')
      assert.ok(reply.status >= 500, `${reply.status} ${reply.text}`)
      assert.match(reply.body.message, /proxy error from 127\.0\.0\.1:\d+ while dialing 127\.0\.0\.1:\d+, code 403/)
      assert.equal(agent.seen.length, seen, 'the agent was not reached')
    } finally {
      clusterProxy.refused.clear()
    }
  })

  it('refuses an admission when the control-plane proxy is down, storing nothing and not reaching the webhook', async () => {
    const received = webhook.received.length
    await controlPlaneProxy.close()
    webhookClient.close()
    const refused = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'proxy-down' } })
    assert.equal(refused.status, 500, refused.text)
    assert.equal(refused.body.reason, 'InternalError')
    assert.match(refused.body.message, /failed calling webhook "check\.example\.com": failed to call webhook: Post ".*": dialing proxy ".*proxy\.sock" failed/)
    assert.equal(webhook.received.length, received)
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/proxy-down')).status, 404)
  })
})
