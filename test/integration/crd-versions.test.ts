/**
 * A CustomResourceDefinition with several versions: every served version
 * reads every object, conversion None only rewrites apiVersion, a Webhook
 * conversion goes through a real HTTPS webhook on loopback (a URL, and a
 * Service whose Endpoints point at it), and an unserved version is not found.
 */
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { nodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { CRDS, installDefinition } from './crd-fixtures.js'
import { createTestServer, TestClient } from './harness.js'

const openSchema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }
const version = (name: string, storage: boolean, served = true) => ({ name, served, storage, schema: openSchema })

function definition(plural: string, kind: string, versions: unknown[], conversion?: unknown) {
  return {
    metadata: { name: `${plural}.versions.example.com` },
    spec: { group: 'versions.example.com', scope: 'Namespaced', names: { plural, kind }, versions, ...(conversion ? { conversion } : {}) },
  }
}

const path = (v: string, plural: string) => `/apis/versions.example.com/${v}/namespaces/default/${plural}`

describe('versions with conversion None', () => {
  let api: TestClient
  before(async () => {
    const server = createTestServer()
    await server.ready
    api = new TestClient(server)
    await installDefinition(api, definition('things', 'Thing', [version('v1', true), version('v1beta1', false), version('v1alpha1', false, false)]))
  })

  it('lists the served versions in priority order', async () => {
    const group = (await api.get('/apis/versions.example.com')).body
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1'])
    assert.equal(group.preferredVersion.version, 'v1')
    assert.equal((await api.get(path('v1alpha1', 'things'))).status, 404)
  })

  it('reads an object written in one version in the other, with its apiVersion rewritten', async () => {
    const created = await api.post(path('v1beta1', 'things'), { apiVersion: 'versions.example.com/v1beta1', kind: 'Thing', metadata: { name: 'a' }, data: 1 })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.apiVersion, 'versions.example.com/v1beta1')
    const read = await api.get(`${path('v1', 'things')}/a`)
    assert.equal(read.body.apiVersion, 'versions.example.com/v1')
    assert.equal(read.body.data, 1)
    const listed = await api.get(path('v1beta1', 'things'))
    assert.deepEqual(listed.body.items.map((i: KubeObject) => i.apiVersion), ['versions.example.com/v1beta1'])
  })

  it('refuses a body of the other version at a version path', async () => {
    const res = await api.post(path('v1', 'things'), { apiVersion: 'versions.example.com/v1beta1', kind: 'Thing', metadata: { name: 'b' } })
    assert.equal(res.status, 400, res.text)
  })

  it('keeps every version it stored in storedVersions', async () => {
    const crd = (await api.get(`${CRDS}/things.versions.example.com`)).body
    crd.spec.versions = [version('v1', false), version('v1beta1', true)]
    const res = await api.put(`${CRDS}/things.versions.example.com`, crd)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.status.storedVersions, ['v1', 'v1beta1'])
  })
})

/** A conversion webhook: v1 `spec.size` is v2 `spec.dimensions.size`. */
function convert(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const { request } = JSON.parse(Buffer.concat(chunks).toString()) as { request: { uid: string; desiredAPIVersion: string; objects: KubeObject[] } }
    const convertedObjects = request.objects.map((o) => {
      const spec = (o['spec'] ?? {}) as { size?: number; dimensions?: { size?: number } }
      const toV2 = request.desiredAPIVersion.endsWith('/v2')
      return { ...o, apiVersion: request.desiredAPIVersion, spec: toV2 ? { dimensions: { size: spec.size } } : { size: spec.dimensions?.size } }
    })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: request.uid, result: { status: 'Success' }, convertedObjects } }))
  })
}

describe('versions with a conversion webhook', () => {
  let api: TestClient
  let webhook: ReturnType<typeof createServer>
  let port = 0
  let caBundle = ''

  before(async () => {
    const ca = await createCertificateAuthority({ commonName: 'webhook-ca' })
    const serving = await issueServingCertificate(ca, { commonName: 'converter', dnsNames: ['converter.default.svc', 'localhost'], ipAddresses: ['127.0.0.1'] })
    webhook = createServer({ key: serving.privateKey, cert: serving.certificate }, convert)
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve))
    port = (webhook.address() as AddressInfo).port
    caBundle = Buffer.from(ca.certificate).toString('base64')
    const server = createTestServer({}, { webhookClient: nodeWebhookClient() })
    await server.ready
    api = new TestClient(server)
  })
  after(() => webhook.close())

  const webhookConversion = (clientConfig: unknown) => ({
    strategy: 'Webhook',
    webhook: { conversionReviewVersions: ['v1'], clientConfig },
  })

  it('converts through a webhook named by its URL', async () => {
    await installDefinition(api, definition('boxes', 'Box', [version('v1', true), version('v2', false)], webhookConversion({ url: `https://127.0.0.1:${port}/convert`, caBundle })))
    const created = await api.post(path('v2', 'boxes'), { apiVersion: 'versions.example.com/v2', kind: 'Box', metadata: { name: 'b' }, spec: { dimensions: { size: 3 } } })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.body.spec, { dimensions: { size: 3 } })
    const v1 = await api.get(`${path('v1', 'boxes')}/b`)
    assert.deepEqual([v1.body.apiVersion, v1.body.spec], ['versions.example.com/v1', { size: 3 }])
    const list = await api.get(path('v2', 'boxes'))
    assert.deepEqual(list.body.items.map((i: { spec: unknown }) => i.spec), [{ dimensions: { size: 3 } }])
  })

  it('converts through a webhook named by a Service with Endpoints on loopback', async () => {
    const service = await api.post('/api/v1/namespaces/default/services', { metadata: { name: 'converter' }, spec: { ports: [{ port: 443, targetPort: port }] } })
    assert.equal(service.status, 201, service.text)
    const endpoints = { metadata: { name: 'converter' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] }
    const put = await api.put('/api/v1/namespaces/default/endpoints/converter', endpoints)
    if (put.status === 404) assert.equal((await api.post('/api/v1/namespaces/default/endpoints', endpoints)).status, 201)
    const conversion = webhookConversion({ service: { namespace: 'default', name: 'converter', path: '/convert' }, caBundle })
    await installDefinition(api, definition('crates', 'Crate', [version('v1', true), version('v2', false)], conversion))
    const created = await api.post(path('v2', 'crates'), { apiVersion: 'versions.example.com/v2', kind: 'Crate', metadata: { name: 'c' }, spec: { dimensions: { size: 7 } } })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual((await api.get(`${path('v1', 'crates')}/c`)).body.spec, { size: 7 })
  })

  it('answers 500 naming the webhook when it cannot be reached, storing nothing', async () => {
    const unreachable = webhookConversion({ url: 'https://127.0.0.1:1/convert', caBundle })
    await installDefinition(api, definition('bins', 'Bin', [version('v1', true), version('v2', false)], unreachable))
    const res = await api.post(path('v2', 'bins'), { apiVersion: 'versions.example.com/v2', kind: 'Bin', metadata: { name: 'x' }, spec: {} })
    assert.equal(res.status, 500, res.text)
    assert.match(res.body.message, /conversion webhook for versions.example.com\/v2, Kind=Bin failed/)
    assert.deepEqual((await api.get(path('v1', 'bins'))).body.items, [])
  })
})
