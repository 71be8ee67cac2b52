/**
 * Admission webhooks against the daemon with kubectl: a mutating webhook and
 * a validating one on loopback over HTTPS with their own CA, configured with
 * `kubectl apply`; what the first sets is stored and seen by the second, and
 * the second's refusal reaches the user in upstream's words with nothing stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type AdmissionWebhookServer, answer, patchAnswer, startAdmissionWebhook } from '../integration/admission-webhook-server.js'
import { Daemon, eventually } from './daemon.js'

describe('admission webhooks through kubectl', () => {
  let daemon: Daemon
  let webhook: AdmissionWebhookServer

  before(async () => {
    webhook = await startAdmissionWebhook()
    daemon = await Daemon.start()
  })
  after(async () => {
    await daemon?.stop()
    await webhook?.close()
  })

  it('stores what the mutating webhook adds, and the validating one, seeing it, refuses with its message', async () => {
    webhook.handlers.set('/stamp', (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }]))
    webhook.handlers.set('/check', (r) => {
      const object = r.body.request['object'] as { metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> }
      if (object.metadata.labels?.['stamped'] !== 'yes') return answer(r, { allowed: false, status: { code: 403, message: 'not stamped' } })
      if (object.data?.['secret']) return answer(r, { allowed: false, status: { code: 403, message: 'no secrets in config maps' } })
      return answer(r, {})
    })
    await daemon.ok('create', 'namespace', 'hooked')
    await daemon.ok('label', 'namespace', 'hooked', 'webhooks=on')
    const rule = { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }
    const hook = (name: string, path: string) => ({
      name,
      clientConfig: { url: `${webhook.base}${path}`, caBundle: webhook.caBundle },
      rules: [rule],
      namespaceSelector: { matchLabels: { webhooks: 'on' } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    })
    const manifest = daemon.manifest(
      'webhooks.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'stamp' }, webhooks: [hook('stamp.example.com', '/stamp')] },
          { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'check' }, webhooks: [hook('check.example.com', '/check')] },
        ],
      }),
    )
    await daemon.ok('apply', '-f', manifest)

    await eventually(async () => {
      await daemon.kubectl('delete', 'configmap', 'plain', '-n', 'hooked', '--ignore-not-found')
      await daemon.ok('create', 'configmap', 'plain', '-n', 'hooked', '--from-literal=a=b')
      assert.equal(await daemon.ok('get', 'configmap', 'plain', '-n', 'hooked', '-o', 'jsonpath={.metadata.labels.stamped}'), 'yes')
    })

    const refused = await daemon.kubectl('create', 'configmap', 'leaky', '-n', 'hooked', '--from-literal=secret=x')
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /admission webhook "check\.example\.com" denied the request: no secrets in config maps/)
    assert.equal((await daemon.kubectl('get', 'configmap', 'leaky', '-n', 'hooked')).code, 1, 'nothing was stored')

    // Outside the selected namespace the webhooks are not called.
    const before = webhook.received.length
    await daemon.ok('create', 'configmap', 'elsewhere', '--from-literal=secret=x')
    assert.equal(webhook.received.length, before)
  })
})
