/**
 * An egress proxy that takes the connection and never answers the dial:
 * the calls made through it (here, admission webhooks over the control
 * plane's selection) still end at their own deadlines, and the webhook's
 * failure policy decides. Before, such a call waited for the proxy for good.
 */
import assert from 'node:assert/strict'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { proxyDialer, type EgressDialers } from '../../runtimes/node/adapter/egress-dialer.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { createTestServer, TestClient } from './harness.js'

describe('an egress proxy that never answers the dial', () => {
  let proxy: Server
  const held = new Set<Socket>()
  let client: NodeWebhookClient
  let api: TestClient

  before(async () => {
    proxy = createServer((socket) => {
      // Reads the CONNECT and says nothing.
      held.add(socket)
      socket.on('close', () => held.delete(socket))
      socket.resume()
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const dialers: EgressDialers = new Map([['controlplane', await proxyDialer({ kind: 'tcp', url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` })]])
    client = nodeWebhookClient(dialers)
    const server = createTestServer({ admission: { plugins: ['ValidatingAdmissionWebhook'] } }, { webhookClient: client })
    await server.ready
    api = new TestClient(server)
    const hook = (name: string, failurePolicy: string, ns: string) => ({
      name,
      // Never reached: the proxy is where the call stops.
      clientConfig: { url: `https://webhook.example.com/${name}` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      timeoutSeconds: 1,
      failurePolicy,
    })
    for (const ns of ['fail-closed', 'fail-open']) assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201)
    const res = await api.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      metadata: { name: 'behind-proxy' },
      webhooks: [hook('closed.example.com', 'Fail', 'fail-closed'), hook('open.example.com', 'Ignore', 'fail-open')],
    })
    assert.equal(res.status, 201, res.text)
  })
  after(async () => {
    client?.close()
    for (const socket of held) socket.destroy()
    await new Promise((resolve) => proxy?.close(resolve))
  })

  it('fails the call at its deadline: Fail refuses the request with 500, nothing stored', async () => {
    const res = await api.post('/api/v1/namespaces/fail-closed/configmaps', { metadata: { name: 'one' } })
    assert.equal(res.status, 500, res.text)
    assert.match(res.body.message, /failed calling webhook "closed\.example\.com": failed to call webhook: Post .*timeout=1s.*context deadline exceeded/)
    assert.equal((await api.get('/api/v1/namespaces/fail-closed/configmaps/one')).status, 404)
  })

  it('fails the call at its deadline: Ignore lets the request through', async () => {
    const res = await api.post('/api/v1/namespaces/fail-open/configmaps', { metadata: { name: 'one' } })
    assert.equal(res.status, 201, res.text)
  })
})
