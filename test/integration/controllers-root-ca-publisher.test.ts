import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createTestServer, eventually, startServer, type TestClient } from './harness.js'

const CA = '-----BEGIN CERTIFICATE-----\nMIIBroot\n-----END CERTIFICATE-----\n'
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.'
const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`

async function published(client: TestClient, ns: string): Promise<any> {
  let found: any
  await eventually(`kube-root-ca.crt is published in ${ns}`, async () => {
    const reply = await client.get(cmPath(ns))
    found = reply.body
    return reply.status === 200 && reply.body.data?.['ca.crt'] === CA && Boolean(reply.body.metadata.annotations?.['kubernetes.io/description'])
  })
  return found
}

async function withServer(options: Parameters<typeof startServer>[0], run: (client: TestClient) => Promise<void>): Promise<void> {
  const client = await startServer({ authorizationModes: ['RBAC'], ...options })
  try {
    await run(client)
  } finally {
    await client.server.shutdown()
  }
}

describe('root-ca-cert-publisher controller', () => {
  it('publishes the bundle in existing and new namespaces, with upstream\'s description', async () => {
    await withServer({ controllers: ['root-ca-cert-publisher'], rootCA: CA }, async (client) => {
      for (const ns of ['default', 'kube-system', 'kube-public']) {
        const cm = await published(client, ns)
        assert.deepEqual(cm.data, { 'ca.crt': CA })
        assert.equal(cm.metadata.annotations['kubernetes.io/description'], DESCRIPTION)
      }
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: 'fresh' } })).status, 201)
      await published(client, 'fresh')
    })
  })

  it('makes the ConfigMap again when deleted, and puts its data and description back when edited', async () => {
    await withServer({ controllers: ['root-ca-cert-publisher'], rootCA: CA }, async (client) => {
      const first = await published(client, 'default')
      assert.equal((await client.delete(cmPath('default'))).status, 200)
      const again = await published(client, 'default')
      assert.notEqual(again.metadata.uid, first.metadata.uid)

      // `data` is the bundle alone again; binaryData and other annotations stay, as upstream writes them.
      const edited = await client.update(cmPath('default'), (cm) => ({
        ...cm,
        metadata: { ...cm.metadata, annotations: { mine: 'kept' } },
        data: { 'ca.crt': 'changed', extra: 'x' },
        binaryData: { blob: 'AAE=' },
      }))
      assert.equal(edited.status, 200)
      const fixed = await published(client, 'default')
      assert.deepEqual(fixed.data, { 'ca.crt': CA })
      assert.deepEqual(fixed.binaryData, { blob: 'AAE=' })
      assert.deepEqual(fixed.metadata.annotations, { mine: 'kept', 'kubernetes.io/description': DESCRIPTION })
    })
  })

  it('makes none in a namespace being terminated', async () => {
    await withServer({ controllers: ['root-ca-cert-publisher'], rootCA: CA }, async (client) => {
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: 'leaving' } })).status, 201)
      await published(client, 'leaving')
      // An object held by a finalizer keeps the namespace terminating once its content is deleted.
      const held = await client.post('/api/v1/namespaces/leaving/configmaps', { metadata: { name: 'held', finalizers: ['example.com/hold'] } })
      assert.equal(held.status, 201)
      assert.equal((await client.delete('/api/v1/namespaces/leaving')).status, 200)
      await eventually('the namespace content is deleted', async () => {
        const remaining = (await client.get('/api/v1/namespaces/leaving/configmaps')).body.items as any[]
        return remaining.length === 1 && remaining[0].metadata.name === 'held' && Boolean(remaining[0].metadata.deletionTimestamp)
      })
      // A namespace made after has its ConfigMap: the controller has been through the terminating one by then.
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: 'later' } })).status, 201)
      await published(client, 'later')
      assert.equal((await client.get(cmPath('leaving'))).status, 404)
      assert.equal((await client.get('/api/v1/namespaces/leaving')).body.status.phase, 'Terminating')
      // The create it was refused names the cause controllers stop on, as upstream's namespace lifecycle admission.
      const refused = await client.post('/api/v1/namespaces/leaving/configmaps', { metadata: { name: 'late' } })
      assert.equal(refused.status, 403)
      assert.deepEqual(refused.body.details.causes, [{ reason: 'NamespaceTerminating', message: 'namespace leaving is being terminated', field: 'metadata.namespace' }])
      await client.update('/api/v1/namespaces/leaving/configmaps/held', (cm) => ({ ...cm, metadata: { ...cm.metadata, finalizers: [] } }))
    })
  })

  it('does not run when left out, nor under `*` without a bundle; named without one, start-up stops', async () => {
    for (const options of [{ controllers: ['*', '-root-ca-cert-publisher'], rootCA: CA }, { controllers: ['*'] }]) {
      await withServer(options, async (client) => {
        assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: 'plain' } })).status, 201)
        // The namespace's default ServiceAccount, made on the same event, marks the moment the ConfigMap would have come.
        await eventually('the default ServiceAccount is made', async () => (await client.get('/api/v1/namespaces/plain/serviceaccounts/default')).status === 200)
        assert.equal((await client.get(cmPath('plain'))).status, 404)
        assert.equal((await client.get(cmPath('default'))).status, 404)
      })
    }
    assert.throws(() => createTestServer({ controllers: ['root-ca-cert-publisher'] }), /"root-ca-cert-publisher" needs the CA bundle to publish/)
  })
})
