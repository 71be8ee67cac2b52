/**
 * /openapi/v2 and /openapi/v3 with an aggregated API server on loopback, as
 * kube-aggregator's OpenAPI controllers make them: the extension's documents
 * are downloaded in the background (through the proxy, as
 * system:aggregator), its /apis/ paths and definitions merged into v2 (a
 * colliding, different definition renamed), its group/version listed in the
 * v3 index and its document served; a document too large or too deep is
 * not taken, an unavailable APIService keeps its last good document, a
 * deleted one's go away.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import {
  exposeExtensionServer,
  type ExtensionServer,
  frontProxyRequestHeader,
  startExtensionServer,
  WARDLE,
  WARDLE_GV,
  wardleOpenApiV2,
  wardleOpenApiV3,
} from './extension-apiserver.js'
import { createTestServer, TestClient, untilPasses } from './harness.js'

const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices'
const NAME = `v1alpha1.${WARDLE}`
const FLUNDER_PATH = `/apis/${WARDLE_GV}/namespaces/{namespace}/flunders/{name}`
const FLUNDER = 'com.example.wardle.v1alpha1.Flunder'
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'
const V3_KEY = `apis/${WARDLE_GV}`
const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'

type V2 = { paths: Record<string, { get?: { operationId?: string; responses?: Record<string, { schema?: { $ref?: string } }> } }>; definitions: Record<string, Record<string, unknown>> }

describe('OpenAPI documents of an aggregated API server', () => {
  let ext: ExtensionServer
  let api: TestClient
  let transport: NodeProxyTransport
  let ownEtag: string
  let ownObjectMeta: unknown

  const v2 = async () => {
    const r = await api.get('/openapi/v2')
    assert.equal(r.status, 200)
    return { doc: r.body as V2, etag: r.headers.get('etag') ?? '' }
  }
  const downloads = (path: string) => ext.seen.filter((s) => s.path === path).length

  before(async () => {
    const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
    ext = await startExtensionServer(proxyCA.certificate, ['front-proxy-client'])
    transport = nodeProxyTransport()
    const server = createTestServer(
      {
        embeddedIdentity: ADMIN_IDENTITY,
        authentication: { requestHeader: frontProxyRequestHeader(proxyCA.certificate) },
        aggregation: {
          enableAggregatorRouting: true,
          proxyClientCertificate: { certificate: proxyClient.certificate, key: proxyClient.privateKey },
          availabilityIntervalMs: 200,
          openApiIntervalMs: 200,
        },
      },
      { proxyTransport: transport },
    )
    await server.ready
    api = new TestClient(server)
    const own = await v2()
    ownEtag = own.etag
    ownObjectMeta = own.doc.definitions[OBJECT_META]
    await exposeExtensionServer(api, ext)
    const created = await api.post(APISERVICES, {
      metadata: { name: NAME },
      spec: { group: WARDLE, version: 'v1alpha1', service: { namespace: 'wardle', name: 'api', port: 443 }, caBundle: ext.caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    })
    assert.equal(created.status, 201, created.text)
    await untilPasses(async () => assert.ok((await v2()).doc.paths[FLUNDER_PATH], 'the flunder path in /openapi/v2'))
  })

  after(async () => {
    await api?.server.shutdown()
    transport?.close()
    await ext?.close()
  })

  it("takes the extension's /apis/ paths and the definitions they reach into /openapi/v2, under a new ETag", async () => {
    const { doc, etag } = await v2()
    assert.equal(doc.paths[FLUNDER_PATH]?.get?.operationId, 'readWardleV1alpha1NamespacedFlunder')
    assert.deepEqual(doc.definitions[FLUNDER]?.['x-kubernetes-group-version-kind'], [{ group: WARDLE, version: 'v1alpha1', kind: 'Flunder' }])
    assert.equal(doc.paths['/wardle-healthz'], undefined, 'a path outside /apis/ is not taken')
    assert.equal(doc.definitions['com.example.wardle.v1alpha1.Unused'], undefined, 'a definition no taken path reaches is not taken')
    assert.ok(doc.paths['/api/v1/namespaces'], 'the server keeps its own paths')
    assert.notEqual(etag, ownEtag)
    const again = await api.get('/openapi/v2', { headers: { 'if-none-match': etag } })
    assert.equal(again.status, 304)
    assert.equal((await api.get('/openapi/v2', { headers: { 'if-none-match': ownEtag } })).status, 200)
  })

  it("keeps the server's own path when an extension publishes the same one", async () => {
    const { doc } = await v2()
    const deployments = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments']
    assert.ok(deployments?.get, 'the server serves the deployments path')
    assert.notEqual(deployments.get.operationId, 'wardleStealsDeployments')
  })

  it('renames a definition whose name collides but differs to <name>_v2 and points the extension\'s references at it', async () => {
    const { doc } = await v2()
    assert.deepEqual(doc.definitions[OBJECT_META], ownObjectMeta, "the server's ObjectMeta is untouched")
    assert.equal(doc.definitions[`${OBJECT_META}_v2`]?.['description'], "The wardle server's own ObjectMeta.")
    const metadata = (doc.definitions[FLUNDER]?.['properties'] as Record<string, { $ref?: string }>)['metadata']
    assert.equal(metadata?.$ref, `#/definitions/${OBJECT_META}_v2`)
  })

  it('serves the merged document in protobuf too, under the same ETag', async () => {
    const json = await v2()
    const r = await api.server.fetch(new Request('http://in-process/openapi/v2', { headers: { accept: PROTOBUF } }))
    assert.equal(r.status, 200)
    assert.equal(r.headers.get('etag'), json.etag)
    const bytes = Buffer.from(await r.arrayBuffer())
    assert.ok(bytes.includes(Buffer.from(FLUNDER_PATH)), 'the flunder path in the protobuf document')
    assert.ok(bytes.includes(Buffer.from(`${OBJECT_META}_v2`)), 'the renamed definition in the protobuf document')
  })

  it('downloads as system:aggregator over the proxy client certificate, asks for JSON, and sends the ETag back', async () => {
    await untilPasses(async () => {
      const seen = ext.seen.filter((s) => s.path === '/openapi/v2')
      assert.ok(seen.length >= 2, 'a second download')
      const last = seen.at(-1)!
      assert.equal(last.clientCommonName, 'front-proxy-client')
      assert.equal(last.user, 'system:aggregator')
      assert.deepEqual(last.groups, [])
      assert.deepEqual(last.raw.filter(([n]) => n === 'accept').map(([, v]) => v), ['application/json'])
      assert.match(last.raw.find(([n]) => n === 'if-none-match')?.[1] ?? '', /^"[0-9A-F]{32}"$/)
    })
  })

  it("lists the extension's group/version in the /openapi/v3 index with its hash and serves its document", async () => {
    const index = await api.get('/openapi/v3')
    const url: string = index.body.paths[V3_KEY]?.serverRelativeURL
    assert.match(url, new RegExp(`^/openapi/v3/${V3_KEY}\\?hash=[0-9A-F]{16}$`))
    assert.ok(index.body.paths['apis/apps/v1'], "the server's own group/versions stay listed")
    const doc = await api.get(url)
    assert.equal(doc.status, 200)
    assert.deepEqual(doc.body, wardleOpenApiV3())
    assert.equal(doc.headers.get('cache-control'), 'public, immutable')
    const stale = await api.get(`/openapi/v3/${V3_KEY}?hash=0123456789ABCDEF`)
    assert.equal(stale.status, 301)
    assert.equal(stale.headers.get('location'), url)
  })

  it("puts a hash of its own in the index when the extension's is not a plain token", async () => {
    const changed = wardleOpenApiV3()
    changed['info'] = { title: 'wardle', version: 'v0.3' }
    ext.openapi.v3 = changed
    ext.openapi.v3Hash = 'a&b="<x>'
    await untilPasses(async () => {
      const url: string = (await api.get('/openapi/v3')).body.paths[V3_KEY].serverRelativeURL
      assert.match(url, new RegExp(`^/openapi/v3/${V3_KEY}\\?hash=[0-9A-F]{16}$`))
      const doc = await api.get(url)
      assert.equal(doc.status, 200)
      assert.deepEqual(doc.body.info, { title: 'wardle', version: 'v0.3' })
    })
    delete ext.openapi.v3Hash
    ext.openapi.v3 = wardleOpenApiV3()
  })

  it('follows a changed extension document: new paths in v2 under a new ETag, a new hash in the v3 index', async () => {
    const before = await v2()
    const beforeUrl: string = (await api.get('/openapi/v3')).body.paths[V3_KEY].serverRelativeURL
    const changed = wardleOpenApiV2() as V2
    changed.paths[`/apis/${WARDLE_GV}/fizzes`] = { get: { operationId: 'listWardleV1alpha1Fizz', responses: { '200': { schema: { $ref: `#/definitions/${FLUNDER}` } } } } }
    ext.openapi.v2 = changed
    const v3 = wardleOpenApiV3()
    v3['info'] = { title: 'wardle', version: 'v0.2' }
    ext.openapi.v3 = v3
    await untilPasses(async () => {
      const after = await v2()
      assert.ok(after.doc.paths[`/apis/${WARDLE_GV}/fizzes`], 'the new path')
      assert.notEqual(after.etag, before.etag)
      const url: string = (await api.get('/openapi/v3')).body.paths[V3_KEY].serverRelativeURL
      assert.notEqual(url, beforeUrl)
      assert.deepEqual((await api.get(url)).body.info, { title: 'wardle', version: 'v0.2' })
    })
  })

  it('does not take a document larger than 16 MiB or nested deeper than 128 levels, and keeps the last good one', async () => {
    const good = await v2()
    const huge = wardleOpenApiV2() as V2 & { padding?: unknown }
    huge.paths[`/apis/${WARDLE_GV}/huge`] = { get: { operationId: 'huge' } }
    huge.padding = 'x'.repeat(16 * 1024 * 1024)
    const deep = wardleOpenApiV2() as V2 & { padding?: unknown }
    deep.paths[`/apis/${WARDLE_GV}/deep`] = { get: { operationId: 'deep' } }
    deep.padding = JSON.parse('['.repeat(130) + ']'.repeat(130)) as unknown
    for (const hostile of [huge, deep]) {
      ext.openapi.v2 = JSON.stringify(hostile)
      // Two more downloads: the first was refused and dealt with before the second began.
      const seen = downloads('/openapi/v2')
      await untilPasses(async () => assert.ok(downloads('/openapi/v2') >= seen + 2, 'two more downloads'), 30_000)
      const now = await v2()
      assert.equal(now.doc.paths[`/apis/${WARDLE_GV}/huge`], undefined)
      assert.equal(now.doc.paths[`/apis/${WARDLE_GV}/deep`], undefined)
      assert.ok(now.doc.paths[`/apis/${WARDLE_GV}/fizzes`], 'the last good document stays')
      assert.equal(now.etag, good.etag)
    }
    ext.openapi.v2 = wardleOpenApiV2()
  })

  it('serves the v2 document converted to v3 for an extension server without /openapi/v3, as upstream', async () => {
    const v3 = ext.openapi.v3
    delete ext.openapi.v3
    let doc: { components?: { schemas?: Record<string, { properties?: Record<string, { $ref?: string }> }> }; paths?: Record<string, unknown> } = {}
    await untilPasses(async () => {
      const url: string = (await api.get('/openapi/v3')).body.paths[V3_KEY].serverRelativeURL
      doc = (await api.get(url)).body
      // The whole v2 document is converted, as upstream converts it: its path outside /apis/ too.
      assert.ok(doc.paths?.['/wardle-healthz'], JSON.stringify(doc).slice(0, 200))
    })
    assert.deepEqual((doc as { info?: unknown }).info, { title: 'wardle', version: 'v0.1' })
    assert.equal(doc.components?.schemas?.[FLUNDER]?.properties?.['metadata']?.$ref, `#/components/schemas/${OBJECT_META}`)
    assert.deepEqual(doc.paths?.[FLUNDER_PATH], {
      get: {
        operationId: 'readWardleV1alpha1NamespacedFlunder',
        'x-kubernetes-group-version-kind': { group: WARDLE, version: 'v1alpha1', kind: 'Flunder' },
        responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${FLUNDER}` } } } } },
      },
    })
    ext.openapi.v3 = v3!
  })

  it('keeps the last good documents while the APIService is unavailable, and drops them when it is deleted', async () => {
    const endpoints = await api.get('/api/v1/namespaces/wardle/endpoints/api')
    const broken = structuredClone(endpoints.body)
    broken.subsets[0].ports[0].port = 1
    assert.equal((await api.put('/api/v1/namespaces/wardle/endpoints/api', broken)).status, 200)
    await untilPasses(async () => {
      const r = await api.get(`${APISERVICES}/${NAME}`)
      const available = (r.body.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Available')
      assert.equal(available?.status, 'False')
    })
    assert.ok((await v2()).doc.paths[FLUNDER_PATH], 'an unavailable APIService keeps its paths')
    assert.ok((await api.get('/openapi/v3')).body.paths[V3_KEY], 'and its v3 document')

    const deleted = await api.delete(`${APISERVICES}/${NAME}`)
    assert.equal(deleted.status, 200, deleted.text)
    await untilPasses(async () => {
      const { doc, etag } = await v2()
      assert.equal(doc.paths[FLUNDER_PATH], undefined)
      assert.equal(doc.definitions[FLUNDER], undefined)
      assert.equal(doc.definitions[`${OBJECT_META}_v2`], undefined)
      assert.equal(etag, ownEtag)
    })
    assert.equal((await api.get('/openapi/v3')).body.paths[V3_KEY], undefined)
    assert.equal((await api.get(`/openapi/v3/${V3_KEY}`)).status, 404)
  })
})
