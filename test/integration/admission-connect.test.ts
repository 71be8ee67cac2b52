/**
 * CONNECT through admission: exec, attach, port-forward and the proxy
 * subresources reach webhooks and ValidatingAdmissionPolicies with
 * operation CONNECT and their options object (PodExecOptions,
 * NodeProxyOptions, ...), as upstream's connect handler sends them, and a
 * refusal is answered before anything reaches the node agent (a real one,
 * over HTTPS on loopback).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, answer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, TestClient } from './harness.js'
import { type NodeAgent, nodeAgentOptions, startNodeAgent } from './node-agent-server.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const WAIT_MS = 60_000

describe('CONNECT admission', () => {
  let agent: NodeAgent
  let webhook: AdmissionWebhookServer
  let webhookClient: NodeWebhookClient
  let transport: NodeProxyTransport
  let api: TestClient

  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    webhook = await startAdmissionWebhook()
    webhookClient = nodeWebhookClient()
    transport = nodeProxyTransport()
    const server = createTestServer(
      {
        nodeAgent: nodeAgentOptions(agent, pair),
        admission: { plugins: ['ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook'] },
      },
      { proxyTransport: transport, webhookClient, checkProxyable: async () => {} },
    )
    await server.ready
    api = new TestClient(server)
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: 'prod', labels: { env: 'prod' } } }],
      ['/api/v1/namespaces', { metadata: { name: 'hooked', labels: { env: 'hooked' } } }],
      [
        '/api/v1/nodes',
        {
          metadata: { name: 'node-1' },
          status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
        },
      ],
      ['/api/v1/namespaces/prod/pods', { metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'web' }] } }],
      ['/api/v1/namespaces/hooked/pods', { metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'web' }] } }],
    ] as const) {
      const reply = await api.post(path, body)
      assert.equal(reply.status, 201, reply.text)
    }
  })

  after(async () => {
    transport?.close()
    webhookClient?.close()
    await webhook?.close()
    await agent?.close()
  })

  async function created(path: string, body: unknown): Promise<void> {
    const reply = await api.post(path, body)
    assert.equal(reply.status, 201, reply.text)
  }

  /** A policy on CONNECT to the given subresources, with one validation, bound with Deny. */
  async function connectPolicy(name: string, resources: string[], expression: string, message: string, namespaceSelector?: unknown): Promise<void> {
    const rule = { apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources }
    await created(`${ADM}/validatingadmissionpolicies`, {
      metadata: { name },
      spec: { matchConstraints: { resourceRules: [rule] }, validations: [{ expression, message, reason: 'Forbidden' }] },
    })
    await created(`${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'], ...(namespaceSelector ? { matchResources: { namespaceSelector } } : {}) },
    })
  }

  it('refuses an exec a policy on CONNECT denies with 403, before the node agent, and lets the allowed command through admission', async () => {
    await connectPolicy('only-ls', ['pods/exec'], "object.kind == 'PodExecOptions' && object.command == ['ls']", 'only ls may run in production', {
      matchLabels: { env: 'prod' },
    })
    const shell = '/api/v1/namespaces/prod/pods/web/exec?command=sh&stdin=true&stdout=true&container=app'
    await eventually('the policy refuses a shell', async () => (await api.post(shell, '')).status === 403, WAIT_MS)
    const seen = agent.seen.length
    const refused = await api.post(shell, '')
    assert.equal(refused.status, 403)
    assert.equal(refused.body.reason, 'Forbidden')
    assert.equal(
      refused.body.message,
      "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'only-ls' with binding 'only-ls-binding' denied request: only ls may run in production",
    )
    assert.equal(agent.seen.length, seen, 'the node agent was reached')
    // `ls` passes admission and meets the next check: this fetch is no connection upgrade.
    const ls = await api.post('/api/v1/namespaces/prod/pods/web/exec?command=ls&stdout=true&container=app', '')
    assert.equal(ls.status, 400, ls.text)
    assert.equal(ls.body.message, 'Upgrade request required')
  })

  it("refuses a node proxy path a policy reads from NodeProxyOptions, and forwards the others to the agent", async () => {
    await connectPolicy('no-node-logs', ['nodes/proxy'], "object.kind == 'NodeProxyOptions' && !object.path.startsWith('/logs')", 'node logs are private')
    await eventually('the policy refuses node logs', async () => (await api.get('/api/v1/nodes/node-1/proxy/logs/')).status === 403, WAIT_MS)
    const seen = agent.seen.length
    const refused = await api.get('/api/v1/nodes/node-1/proxy/logs/syslog')
    assert.equal(refused.status, 403)
    assert.match(refused.body.message, /^nodes "node-1" is forbidden: .*denied request: node logs are private$/)
    assert.equal(agent.seen.length, seen, 'the node agent was reached')
    const healthz = await api.get('/api/v1/nodes/node-1/proxy/healthz')
    assert.equal(healthz.status, 200, healthz.text)
    assert.equal(agent.seen.length, seen + 1)
    assert.equal(agent.seen.at(-1)?.path, '/healthz')
  })

  it('calls a webhook registered for CONNECT with the options object, and its refusal keeps the request from the node agent', async () => {
    const path = '/deny-connect'
    webhook.handlers.set(path, (r) => answer(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no interactive access here' } }))
    await created(`${ADM}/validatingwebhookconfigurations`, {
      metadata: { name: 'deny-connect' },
      webhooks: [
        {
          name: 'deny-connect.example.com',
          clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
          rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec', 'pods/attach', 'pods/portforward'] }],
          namespaceSelector: { matchLabels: { env: 'hooked' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    })
    const exec = '/api/v1/namespaces/hooked/pods/web/exec?command=cat&command=%2Fetc%2Fpasswd&stdout=true&tty=1&container=app'
    await eventually('the webhook refuses', async () => (await api.post(exec, '')).status === 403, WAIT_MS)
    const seen = agent.seen.length
    const before = webhook.received.length
    const refused = await api.post(exec, '')
    assert.equal(refused.status, 403)
    assert.equal(refused.body.reason, 'Forbidden')
    assert.equal(refused.body.message, 'admission webhook "deny-connect.example.com" denied the request: no interactive access here')
    const review = webhook.received.slice(before).find((r) => r.path === path)?.body.request
    assert.ok(review, 'the webhook was not called')
    assert.equal(review.operation, 'CONNECT')
    assert.deepEqual(review.kind, { group: '', version: 'v1', kind: 'PodExecOptions' })
    assert.deepEqual(review.resource, { group: '', version: 'v1', resource: 'pods' })
    assert.equal(review.subResource, 'exec')
    assert.equal(review.name, 'web')
    assert.equal(review.namespace, 'hooked')
    assert.deepEqual(review.object, { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, tty: true, container: 'app', command: ['cat', '/etc/passwd'] })
    assert.equal(review.oldObject, null)
    assert.equal(review.options, null)
    assert.equal(review.dryRun, false)

    const forward = await api.post('/api/v1/namespaces/hooked/pods/web/portforward?ports=8080,9090', '')
    assert.equal(forward.status, 403)
    const forwardReview = webhook.received.at(-1)?.body.request
    assert.deepEqual(forwardReview?.object, { kind: 'PodPortForwardOptions', apiVersion: 'v1', ports: [8080, 9090] })
    assert.equal(agent.seen.length, seen, 'the node agent was reached')
  })

  it('refuses a port-forward whose ports do not decode with 400, as upstream decodes the options', async () => {
    const reply = await api.post('/api/v1/namespaces/prod/pods/web/portforward?ports=http', '')
    assert.equal(reply.status, 400)
    assert.equal(reply.body.message, 'cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax')
  })
})
