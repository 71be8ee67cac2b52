/**
 * ImagePolicyWebhook against a real HTTPS backend on loopback with its own CA:
 * the ImageReview a pod makes, an allowed pod stored, a denied one refused with
 * upstream's words and not stored, answers cached, and a backend that cannot be
 * reached refusing or allowing as defaultAllow says.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { readImagePolicyFile } from '../../core/admission/builtin/image-policy-webhook.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const pod = (name: string, image: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, annotations },
  spec: { containers: [{ name: 'c', image }], initContainers: [{ name: 'init', image: 'busybox:1.36' }] },
})
const review = (allowed: boolean, reason?: string) => ({ apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', status: { allowed, ...(reason ? { reason } : {}) } })

describe('ImagePolicyWebhook', () => {
  let backend: AdmissionWebhookServer
  let client: NodeWebhookClient

  before(async () => {
    backend = await startAdmissionWebhook()
    client = nodeWebhookClient()
    backend.handlers.set('/images', (r) => {
      const images = (r.body as unknown as { spec: { containers: { image: string }[] } }).spec.containers.map((c) => c.image)
      return images.some((i) => i.endsWith(':latest')) ? review(false, 'Images using latest tag are not allowed') : review(true)
    })
  })
  after(async () => {
    client.close()
    await backend.close()
  })

  async function serverWith(url: string, defaultAllow: boolean): Promise<TestClient> {
    const connection = { url, certificateAuthority: Buffer.from(backend.caBundle, 'base64').toString() }
    const settings = { connection, allowTTLMs: 60_000, denyTTLMs: 60_000, retryBackoffMs: 1, defaultAllow }
    const server = createTestServer({ admission: { plugins: ['ImagePolicyWebhook'], configurations: { ImagePolicyWebhook: settings } } }, { webhookClient: client })
    await server.ready
    return new TestClient(server)
  }

  it('sends every image, the image-policy annotations and the namespace, and stores an allowed pod', async () => {
    const api = await serverWith(`${backend.base}/images`, false)
    const before = backend.received.length
    const created = await api.post(PODS, pod('pinned', 'nginx:1.27', { 'alpha.image-policy.k8s.io/break-glass': 'true', team: 'a' }))
    assert.equal(created.status, 201, created.text)
    const sent = backend.received.slice(before).map((r) => r.body)
    assert.deepEqual(sent, [
      {
        apiVersion: 'imagepolicy.k8s.io/v1alpha1',
        kind: 'ImageReview',
        spec: { containers: [{ image: 'nginx:1.27' }, { image: 'busybox:1.36' }], annotations: { 'alpha.image-policy.k8s.io/break-glass': 'true' }, namespace: 'default' },
      },
    ])
  })

  it('refuses a denied pod with 403 in upstream\'s words, stores nothing, and asks the backend once for the same pod', async () => {
    const api = await serverWith(`${backend.base}/images`, false)
    const before = backend.received.length
    for (let i = 0; i < 2; i++) {
      const refused = await api.post(PODS, pod('floating', 'nginx:latest'))
      assert.equal(refused.status, 403)
      assert.equal(refused.body.message, 'pods "floating" is forbidden: image policy webhook backend denied one or more images: Images using latest tag are not allowed')
    }
    assert.equal(backend.received.length - before, 1, 'the denial was cached')
    assert.equal((await api.get(`${PODS}/floating`)).status, 404)
  })

  it('refuses when the backend cannot be reached and defaultAllow is false, and allows when it is true', async () => {
    const closed = await serverWith('https://127.0.0.1:1/images', false)
    const refused = await closed.post(PODS, pod('unchecked', 'nginx:1.27'))
    assert.equal(refused.status, 403)
    assert.match(refused.body.message, /^pods "unchecked" is forbidden: /)
    assert.equal((await closed.get(`${PODS}/unchecked`)).status, 404)
    const open = await serverWith('https://127.0.0.1:1/images', true)
    assert.equal((await open.post(PODS, pod('unchecked', 'nginx:1.27'))).status, 201)
  })

  it('checks its configuration as upstream: TTLs and backoff within their bounds, a kubeconfig required', () => {
    assert.deepEqual(readImagePolicyFile({ imagePolicy: { kubeConfigFile: 'k', allowTTL: 50, denyTTL: -1, defaultAllow: true } }), {
      kubeConfigFile: 'k',
      retryBackoffMs: 500,
      allowTTLMs: 50_000,
      denyTTLMs: 0,
      defaultAllow: true,
    })
    assert.throws(() => readImagePolicyFile({ imagePolicy: { kubeConfigFile: 'k', allowTTL: 3600 } }), /imagePolicy\.allowTTL: Invalid value: 3600/)
    assert.throws(() => readImagePolicyFile({ imagePolicy: {} }), /imagePolicy\.kubeConfigFile: Required value/)
  })
})
