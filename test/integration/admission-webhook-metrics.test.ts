/**
 * The admission webhook metrics at `/metrics`, scraped and parsed as
 * Prometheus text, with a real webhook over HTTPS on loopback: each call
 * counted in `apiserver_admission_webhook_request_total` and timed in
 * `apiserver_admission_webhook_admission_duration_seconds` with upstream's
 * labels (type `admit` for mutating, `validating`; the HTTP code: 200
 * allowed, the refusal's code, the webhook's own error status), refusals in
 * `apiserver_admission_webhook_rejection_count` by error type, and a failed
 * call let through by failurePolicy Ignore in
 * `apiserver_admission_webhook_fail_open_count`.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { parsePrometheusText, type PromFamily, sampleValue } from '../helpers/prometheus-text.js'
import { type AdmissionWebhookServer, answer, patchAnswer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const CONFIGS = '/apis/admissionregistration.k8s.io/v1'
const REQUESTS = 'apiserver_admission_webhook_request_total'
const DURATION = 'apiserver_admission_webhook_admission_duration_seconds'
const REJECTIONS = 'apiserver_admission_webhook_rejection_count'
const FAIL_OPEN = 'apiserver_admission_webhook_fail_open_count'

describe('admission webhook metrics', () => {
  let webhook: AdmissionWebhookServer
  let client: NodeWebhookClient
  let api: TestClient
  let counter = 0

  before(async () => {
    webhook = await startAdmissionWebhook()
    client = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] } }, { webhookClient: client })
    await server.ready
    api = new TestClient(server)
  })
  after(async () => {
    client.close()
    await webhook.close()
  })

  const scrape = async (): Promise<Map<string, PromFamily>> => parsePrometheusText((await api.get('/metrics')).text)
  const value = (families: Map<string, PromFamily>, name: string, labels: Record<string, string>): number => sampleValue(families, name, labels) ?? 0

  /** One webhook of `kind` in a namespace of its own, in effect when this resolves; answers the namespace. */
  async function webhookFor(kind: 'mutating' | 'validating', name: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
    const ns = `metrics-${++counter}`
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: ns, labels: { 'webhook-test': ns } } })).status, 201)
    const res = await api.post(`${CONFIGS}/${kind}webhookconfigurations`, {
      metadata: { name: `${name}-${ns}` },
      webhooks: [
        {
          name,
          clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'webhook-test': ns } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          ...extra,
        },
      ],
    })
    assert.equal(res.status, 201, res.text)
    await eventually(`the webhook at ${path} is called`, async () => {
      const seen = webhook.received.length
      await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'probe' } })
      return webhook.received.slice(seen).some((r) => r.path === path)
    })
    return ns
  }

  it('counts and times an allowed mutating call as type admit with code 200', async () => {
    webhook.handlers.set('/stamp', (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }]))
    const ns = await webhookFor('mutating', 'stamp.metrics.example.com', '/stamp')
    const labels = { name: 'stamp.metrics.example.com', type: 'admit', operation: 'CREATE', rejected: 'false' }
    const before = await scrape()
    const created = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'one' } })
    assert.equal(created.status, 201, created.text)
    const afterwards = await scrape()
    assert.equal(value(afterwards, REQUESTS, { ...labels, code: '200' }) - value(before, REQUESTS, { ...labels, code: '200' }), 1)
    assert.equal(value(afterwards, `${DURATION}_count`, labels) - value(before, `${DURATION}_count`, labels), 1)
    assert.equal(afterwards.get(REQUESTS)?.type, 'counter')
    assert.equal(afterwards.get(DURATION)?.type, 'histogram')
    // Upstream's buckets for webhook latency.
    const bounds = afterwards.get(DURATION)!.samples.filter((s) => s.name === `${DURATION}_bucket` && s.labels['name'] === labels.name).map((s) => s.labels['le'])
    assert.deepEqual(bounds, ['0.005', '0.025', '0.1', '0.5', '1', '2.5', '10', '25', '+Inf'])
  })

  it('records a validating refusal with the refusal\'s code and error type no_error', async () => {
    webhook.handlers.set('/deny', (r) => answer(r, { allowed: false, status: { code: 403, message: 'not today' } }))
    const ns = await webhookFor('validating', 'deny.metrics.example.com', '/deny')
    const labels = { name: 'deny.metrics.example.com', type: 'validating', operation: 'CREATE' }
    const before = await scrape()
    const refused = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'two' } })
    assert.equal(refused.status, 403, refused.text)
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/two`)).status, 404, 'nothing was stored')
    const afterwards = await scrape()
    const delta = (name: string, l: Record<string, string>) => value(afterwards, name, l) - value(before, name, l)
    assert.equal(delta(REQUESTS, { ...labels, code: '403', rejected: 'true' }), 1)
    assert.equal(delta(`${DURATION}_count`, { ...labels, rejected: 'true' }), 1)
    assert.equal(delta(REJECTIONS, { ...labels, error_type: 'no_error', rejection_code: '403' }), 1)
  })

  it('records a webhook that answers 404 under failurePolicy Fail as a calling error with its HTTP code', async () => {
    // No handler: the webhook server answers 404.
    const ns = await webhookFor('validating', 'missing.metrics.example.com', '/missing')
    const labels = { name: 'missing.metrics.example.com', type: 'validating', operation: 'CREATE' }
    const before = await scrape()
    const refused = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'three' } })
    assert.equal(refused.status, 500, refused.text)
    const afterwards = await scrape()
    const delta = (name: string, l: Record<string, string>) => value(afterwards, name, l) - value(before, name, l)
    assert.equal(delta(REQUESTS, { ...labels, code: '404', rejected: 'true' }), 1)
    assert.equal(delta(REJECTIONS, { ...labels, error_type: 'calling_webhook_error', rejection_code: '404' }), 1)
  })

  it('records a failed call that failurePolicy Ignore lets through as not rejected, and counts it as failing open', async () => {
    const ns = await webhookFor('validating', 'lenient.metrics.example.com', '/lenient-missing', { failurePolicy: 'Ignore' })
    const labels = { name: 'lenient.metrics.example.com', type: 'validating', operation: 'CREATE' }
    const before = await scrape()
    const created = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'four' } })
    assert.equal(created.status, 201, created.text)
    const afterwards = await scrape()
    const delta = (name: string, l: Record<string, string>) => value(afterwards, name, l) - value(before, name, l)
    assert.equal(delta(REQUESTS, { ...labels, code: '404', rejected: 'false' }), 1)
    assert.equal(delta(FAIL_OPEN, { name: labels.name, type: 'validating' }), 1)
    assert.equal(delta(REJECTIONS, { ...labels, error_type: 'calling_webhook_error', rejection_code: '404' }), 0)
  })
})
