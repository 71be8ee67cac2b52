/**
 * A namespace whose deletion cannot finish at once (an object in it held by
 * its finalizer) is looked at again by the namespace controller, without
 * any change to the namespace itself, and goes once the object is released.
 * Changes to the namespace meanwhile do not start extra passes: each pass
 * asks every held object's admission again, and a user may change the
 * namespace at will.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { nodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { answer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, startServer, TestClient } from './harness.js'

describe('namespace deletion waiting on a finalizer', () => {
  it('finishes once the held object is released, without the namespace changing', async () => {
    const api = await startServer()
    try {
      await api.post('/api/v1/namespaces', { metadata: { name: 'held' } })
      const cm = '/api/v1/namespaces/held/configmaps/cfg'
      await api.post('/api/v1/namespaces/held/configmaps', { metadata: { name: 'cfg', finalizers: ['example.com/hold'] } })
      await api.post('/api/v1/namespaces/held/configmaps', { metadata: { name: 'free' } })
      assert.equal((await api.delete('/api/v1/namespaces/held')).status, 200)
      await eventually('the controller emptied what it could', async () => (await api.get('/api/v1/namespaces/held/configmaps/free')).status === 404)
      assert.ok((await api.get(cm)).body.metadata.deletionTimestamp, 'the held object is marked for deletion')
      assert.equal((await api.get('/api/v1/namespaces/held')).body.status.phase, 'Terminating')
      assert.equal((await api.patch(cm, { metadata: { finalizers: null } }, 'application/merge-patch+json')).status, 200)
      await eventually('the namespace is gone', async () => (await api.get('/api/v1/namespaces/held')).status === 404, 15_000)
    } finally {
      await api.server.shutdown()
    }
  })

  it('does not pass over the held objects again for each change of the terminating namespace', async () => {
    const webhook = await startAdmissionWebhook()
    const webhookClient = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['ValidatingAdmissionWebhook'] } }, { webhookClient })
    try {
      await server.ready
      const api = new TestClient(server)
      webhook.handlers.set('/deletes', (r) => answer(r, {}))
      const hook = {
        metadata: { name: 'count-deletes' },
        webhooks: [
          {
            name: 'count-deletes.example.com',
            clientConfig: { url: `${webhook.base}/deletes`, caBundle: webhook.caBundle },
            rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      }
      assert.equal((await api.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', hook)).status, 201)
      await api.post('/api/v1/namespaces', { metadata: { name: 'held' } })
      await api.post('/api/v1/namespaces/held/configmaps', { metadata: { name: 'cfg', finalizers: ['example.com/hold'] } })
      const passes = () => webhook.received.filter((r) => r.body.request['name'] === 'cfg').length
      await eventually('the webhook is in use', async () => (await api.delete('/api/v1/namespaces/held/configmaps/cfg')).status === 200 && passes() > 0)
      const before = passes()
      assert.equal((await api.delete('/api/v1/namespaces/held')).status, 200)
      await eventually('the controller made its first pass', async () => passes() > before)
      const started = performance.now()
      const changes = 10
      for (let i = 0; i < changes; i++) {
        const patched = await api.patch('/api/v1/namespaces/held', { metadata: { labels: { change: String(i) } } }, 'application/merge-patch+json')
        assert.equal(patched.status, 200, patched.text)
        await sleep(100)
      }
      // Besides the first, only the controller's own retries pass again: after 0.5 s, then each pause doubled.
      const elapsed = performance.now() - started
      let retries = 0
      for (let due = 500, pause = 500; due <= elapsed + 500; pause *= 2, due += pause) retries++
      const made = passes() - before
      assert.ok(made <= 1 + retries, `${made} passes over the held object in ${Math.round(elapsed)} ms of ${changes} changes`)
    } finally {
      await server.shutdown()
      webhookClient.close()
      await webhook.close()
    }
  })
})
