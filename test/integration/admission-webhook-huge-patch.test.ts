/**
 * A mutating webhook that answers a patch of tens of megabytes: the server
 * answers other requests meanwhile, and the patched object is refused for
 * its size with nothing stored. (That the patch's base64 and JSON are
 * decoded in time slices is shown in hostile-webhook-replies.test.ts.)
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, patchAnswer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, TestClient } from './harness.js'

/** The patch adds one value of this many characters: its base64 is a third larger. */
const PATCH_VALUE_CHARS = 30 * 1024 * 1024

describe('a mutating webhook answering a huge patch', () => {
  let webhook: AdmissionWebhookServer
  let client: NodeWebhookClient
  let api: TestClient

  before(async () => {
    webhook = await startAdmissionWebhook()
    client = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['MutatingAdmissionWebhook'] } }, { webhookClient: client })
    await server.ready
    api = new TestClient(server)
    const hook = {
      name: 'huge.example.com',
      clientConfig: { url: `${webhook.base}/huge`, caBundle: webhook.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
    }
    const res = await api.post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { metadata: { name: 'huge' }, webhooks: [hook] })
    assert.equal(res.status, 201, res.text)
    const value = 'a'.repeat(PATCH_VALUE_CHARS)
    webhook.handlers.set('/huge', (r) => (r.body.request['name'] === 'probe' ? patchAnswer(r, []) : patchAnswer(r, [{ op: 'add', path: '/data/big', value }])))
    await eventually('the webhook is called', async () => {
      await api.post('/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'probe' } })
      return webhook.received.length > 0
    })
  })
  after(async () => {
    client?.close()
    await webhook?.close()
  })

  it('answers other requests while the patch is decoded, then refuses the object for its size and stores nothing', async () => {
    const written = webhook.repliesWritten
    let answered = false
    const create = api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'bloated' }, data: { small: 'x' } }).finally(() => (answered = true))
    // GETs answered between the reply's last byte leaving the webhook and the create's answer.
    let servedMeanwhile = 0
    while (!answered) {
      // An in-process GET may be answered without a turn of the event loop: one turn each, so the webhook's I/O runs.
      await nextTurn()
      const get = await api.get('/api/v1/namespaces/default')
      assert.equal(get.status, 200, get.text)
      if (webhook.repliesWritten > written && !answered) servedMeanwhile++
    }
    const res = await create
    assert.equal(res.status, 422, res.text)
    assert.match(res.body.message, /is invalid: .*Too long: may not be more than 1048576 bytes/)
    assert.ok(servedMeanwhile >= 1, 'no request was answered while the reply was read and decoded')
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/bloated')).status, 404)
  })
})
