/** /version, health, discovery and OpenAPI, as kubectl reads them. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { kubectlBodies } from '../unit/encoding/protobuf-fixtures.js'
import { startServer } from './harness.js'

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
const AGG_ACCEPT = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`

describe('version and health', () => {
  it('reports a semver gitVersion and its major and minor', async () => {
    const api = await startServer({ version: 'v1.32.7' })
    const v = (await api.get('/version')).body
    assert.equal(v.gitVersion, 'v1.32.7')
    assert.equal(v.major, '1')
    assert.equal(v.minor, '32')
  })

  it('answers ok, a verbose listing, and honours exclude', async () => {
    const api = await startServer()
    for (const path of ['/healthz', '/livez', '/readyz']) assert.equal((await api.get(path)).text, 'ok')
    const verbose = await api.get('/readyz?verbose&exclude=etcd')
    assert.equal(verbose.status, 200)
    assert.match(verbose.text, /^\[\+\]ping ok\n/m)
    assert.match(verbose.text, /^\[\+\]etcd excluded: ok$/m)
    assert.match(verbose.text, /^\[\+\]shutdown ok$/m)
    assert.match(verbose.text, /readyz check passed\n$/)
    assert.equal((await api.get('/healthz/ping')).text, 'ok')
  })

  it('fails readyz once shutting down while livez stays ok', async () => {
    const api = await startServer()
    await api.server.shutdown()
    const ready = await api.get('/readyz')
    assert.equal(ready.status, 500)
    assert.match(ready.text, /^\[-\]shutdown failed: reason withheld$/m)
    assert.match(ready.text, /readyz check failed\n$/)
    assert.equal((await api.get('/livez')).status, 200)
  })
})

describe('discovery', () => {
  it('answers aggregated discovery with its exact media type', async () => {
    const api = await startServer()
    const core = await api.get('/api', { headers: { accept: AGG_ACCEPT } })
    assert.equal(core.headers.get('content-type'), AGGREGATED)
    assert.equal(core.body.kind, 'APIGroupDiscoveryList')
    const v1 = core.body.items[0].versions[0]
    const cm = v1.resources.find((r: { resource: string }) => r.resource === 'configmaps')
    assert.deepEqual(cm.shortNames, ['cm'])
    assert.equal(cm.scope, 'Namespaced')
    assert.deepEqual(cm.responseKind, { group: '', version: 'v1', kind: 'ConfigMap' })
    const groups = await api.get('/apis', { headers: { accept: AGG_ACCEPT } })
    const names = groups.body.items.map((g: { metadata: { name: string } }) => g.metadata.name)
    for (const group of ['authentication.k8s.io', 'authorization.k8s.io']) assert.ok(names.includes(group), group)
  })

  it('answers legacy discovery when the client asks for plain JSON', async () => {
    const api = await startServer()
    assert.deepEqual((await api.get('/api')).body.versions, ['v1'])
    const list = await api.get('/api/v1')
    assert.equal(list.body.kind, 'APIResourceList')
    assert.ok(list.body.resources.some((r: { name: string; namespaced: boolean }) => r.name === 'namespaces' && !r.namespaced))
    assert.equal((await api.get('/apis')).body.kind, 'APIGroupList')
    assert.equal((await api.get('/apis/authorization.k8s.io/v1')).body.groupVersion, 'authorization.k8s.io/v1')
    assert.equal((await api.get('/apis/example.com/v1')).status, 404)
  })
})

describe('OpenAPI v3', () => {
  it('indexes group versions at hashed URLs served immutable', async () => {
    const api = await startServer()
    const index = (await api.get('/openapi/v3')).body
    const url: string = index.paths['api/v1'].serverRelativeURL
    assert.match(url, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/)
    const doc = await api.get(url)
    assert.equal(doc.status, 200)
    assert.equal(doc.headers.get('cache-control'), 'public, immutable')
    assert.ok(doc.body.components.schemas['io.k8s.api.core.v1.ConfigMap'])
  })
})

describe('protobuf request bodies', () => {
  it('creates a configmap from the bytes kubectl create configmap sends, answering JSON', async () => {
    const api = await startServer()
    const bytes = Uint8Array.from(atob(kubectlBodies.createConfigMap.base64), (c) => c.charCodeAt(0))
    const r = await api.call('POST', '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict', {
      body: bytes,
      headers: {
        'content-type': 'application/vnd.kubernetes.protobuf',
        accept: 'application/vnd.kubernetes.protobuf,application/json',
      },
    })
    assert.equal(r.status, 201)
    assert.equal(r.headers.get('content-type'), 'application/json')
    assert.equal(r.body.metadata.name, 'cfg')
    assert.deepEqual(r.body.data, { a: 'b' })
  })

  it('answers protobuf to a client that accepts nothing else', async () => {
    const api = await startServer()
    const r = await api.server.fetch(
      new Request('http://in-process/api/v1/namespaces/default', { headers: { accept: 'application/vnd.kubernetes.protobuf' } }),
    )
    assert.equal(r.headers.get('content-type'), 'application/vnd.kubernetes.protobuf')
    assert.deepEqual([...new Uint8Array(await r.arrayBuffer()).slice(0, 4)], [0x6b, 0x38, 0x73, 0x00])
  })
})
