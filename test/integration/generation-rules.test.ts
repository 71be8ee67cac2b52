/**
 * metadata.generation per kind, as 1.32's strategies keep it: which kinds
 * start at 1, which count a change to what the user asked for, and which
 * never carry one.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const ADMISSION = '/apis/admissionregistration.k8s.io/v1'
const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }]
const webhook = (path: string) => ({
  name: 'hook.example.com',
  clientConfig: { url: `https://hook.example.com/${path}` },
  rules,
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
})

describe('metadata.generation by kind', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  /** Creates `body` at `collection`, then PUTs it changed twice: metadata alone, then what the user asked for. */
  async function generations(collection: string, body: Record<string, unknown>, change: (obj: Record<string, any>) => void): Promise<(number | undefined)[]> {
    const created = await client.post(collection, body)
    assert.equal(created.status, 201, created.text)
    const item = `${collection}/${created.body.metadata.name}`
    const labelled = await client.put(item, { ...created.body, metadata: { ...created.body.metadata, labels: { tier: 'one' } } })
    assert.equal(labelled.status, 200, labelled.text)
    const changed = structuredClone(labelled.body)
    change(changed)
    const updated = await client.put(item, changed)
    assert.equal(updated.status, 200, updated.text)
    return [created.body.metadata.generation, labelled.body.metadata.generation, updated.body.metadata.generation]
  }

  it('counts a webhook configuration from 1, one more when its webhooks change', async () => {
    for (const kind of ['Mutating', 'Validating']) {
      const found = await generations(`${ADMISSION}/${kind.toLowerCase()}webhookconfigurations`, { metadata: { name: `${kind.toLowerCase()}-hooks` }, webhooks: [webhook('a')] }, (o) => {
        o['webhooks'][0].clientConfig.url = 'https://hook.example.com/b'
      })
      assert.deepEqual(found, [1, 1, 2], kind)
    }
  })

  it('counts a policy binding and an IngressClass from 1, one more when the spec changes', async () => {
    const policy = { metadata: { name: 'replicas' }, spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'true' }] } }
    assert.equal((await client.post(`${ADMISSION}/validatingadmissionpolicies`, policy)).status, 201)
    const binding = await generations(`${ADMISSION}/validatingadmissionpolicybindings`, { metadata: { name: 'replicas' }, spec: { policyName: 'replicas', validationActions: ['Deny'] } }, (o) => {
      o['spec'].validationActions = ['Warn']
    })
    assert.deepEqual(binding, [1, 1, 2])
    const ingressClass = await generations('/apis/networking.k8s.io/v1/ingressclasses', { metadata: { name: 'edge' }, spec: { controller: 'example.com/ingress' } }, (o) => {
      o['spec'].parameters = { kind: 'Config', name: 'edge' }
    })
    assert.deepEqual(ingressClass, [1, 1, 2])
  })

  it('starts a PriorityClass at 1 and leaves it there', async () => {
    const found = await generations('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'urgent' }, value: 1000, description: 'first' }, (o) => {
      o['description'] = 'second'
    })
    assert.deepEqual(found, [1, 1, 1])
  })

  it('gives a HorizontalPodAutoscaler no generation (1.32 has no HPAGeneration)', async () => {
    const hpa = { metadata: { name: 'web' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 } }
    const found = await generations('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', hpa, (o) => {
      o['spec'].maxReplicas = 5
    })
    assert.deepEqual(found, [undefined, undefined, undefined])
  })
})
