/**
 * API aggregation against a real extension API server on loopback (HTTPS,
 * its own serving CA in the APIService's caBundle, the proxy client
 * certificate checked against the request-header CA): local APIServices,
 * availability with upstream's reasons, proxying with the caller's identity
 * in X-Remote-* headers, discovery, and the attacks: a forged X-Remote-User,
 * an unauthorized caller, a redirect, an APIService claiming a built-in group.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { exposeExtensionServer, type ExtensionServer, frontProxyRequestHeader, startExtensionServer, WARDLE, WARDLE_GV } from './extension-apiserver.js'
import { createTestServer, TestClient, untilPasses } from './harness.js'

const tokens = [
  { token: 'alice-token', user: { username: 'alice', uid: 'a-1', groups: ['dev'], extra: { 'scopes.example/team': ['blue'] } } },
  { token: 'bob-token', user: { username: 'bob', groups: ['ops'] } },
]
const as = (who: 'alice' | 'bob', headers: Record<string, string> = {}) => ({ connection: {}, headers: { authorization: `Bearer ${who}-token`, ...headers } })
const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices'
const FLUNDERS = `/apis/${WARDLE_GV}/namespaces/wardle/flunders`

const apiService = (name: string, group: string, version: string, service: Record<string, unknown>, caBundle?: string) => ({
  metadata: { name },
  spec: { group, version, service, ...(caBundle ? { caBundle } : { insecureSkipTLSVerify: true }), groupPriorityMinimum: 1000, versionPriority: 15 },
})

function availableCondition(obj: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }) {
  return obj.status?.conditions?.find((c) => c.type === 'Available')
}

describe('API aggregation with an extension server on loopback', () => {
  let ext: ExtensionServer
  let api: TestClient
  let transport: NodeProxyTransport

  const waitForCondition = async (name: string, reason: string) => {
    let last: unknown
    await untilPasses(async () => {
      const r = await api.get(`${APISERVICES}/${name}`)
      last = availableCondition(r.body)
      assert.equal(availableCondition(r.body)?.reason, reason, JSON.stringify(last))
    }, 15_000)
    return last as { status: string; reason: string; message: string }
  }

  before(async () => {
    const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
    ext = await startExtensionServer(proxyCA.certificate, ['front-proxy-client'])
    transport = nodeProxyTransport()
    const server = createTestServer(
      {
        embeddedIdentity: ADMIN_IDENTITY,
        authorizationModes: ['RBAC'],
        bootstrapRbacPolicy: false,
        authentication: {
          tokens,
          requestHeader: frontProxyRequestHeader(proxyCA.certificate),
        },
        aggregation: {
          enableAggregatorRouting: true,
          proxyClientCertificate: { certificate: proxyClient.certificate, key: proxyClient.privateKey },
          availabilityIntervalMs: 200,
        },
      },
      { proxyTransport: transport },
    )
    await server.ready
    api = new TestClient(server)
    const created = async (path: string, body: unknown) => {
      const r = await api.post(path, body)
      assert.equal(r.status, 201, r.text)
    }
    await exposeExtensionServer(api, ext)
    await created('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'flunder-editor' },
      rules: [{ apiGroups: [WARDLE], resources: ['flunders'], verbs: ['get', 'list', 'watch', 'create'] }],
    })
    await created('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'alice-flunders' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'flunder-editor' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    })
    await created(APISERVICES, apiService(`v1alpha1.${WARDLE}`, WARDLE, 'v1alpha1', { namespace: 'wardle', name: 'api', port: 443 }, ext.caBundle))
    await waitForCondition(`v1alpha1.${WARDLE}`, 'Passed')
  })

  after(async () => {
    await api?.server.shutdown()
    transport?.close()
    await ext?.close()
  })

  it('keeps a local APIService for each served group/version, Available as Local', async () => {
    const apps = await api.get(`${APISERVICES}/v1.apps`)
    assert.equal(apps.status, 200)
    assert.equal(apps.body.spec.service, undefined)
    assert.equal(apps.body.spec.groupPriorityMinimum, 17800)
    assert.equal(apps.body.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'onstart')
    assert.deepEqual(
      { status: availableCondition(apps.body)?.status, reason: availableCondition(apps.body)?.reason, message: availableCondition(apps.body)?.message },
      { status: 'True', reason: 'Local', message: 'Local APIServices are always available' },
    )
    assert.equal((await api.get(`${APISERVICES}/v1.`)).status, 200)
  })

  it('marks the extension server Available with "all checks passed"', async () => {
    const r = await api.get(`${APISERVICES}/v1alpha1.${WARDLE}`)
    assert.deepEqual(
      { status: availableCondition(r.body)?.status, message: availableCondition(r.body)?.message },
      { status: 'True', message: 'all checks passed' },
    )
  })

  it("proxies an authorized caller's request with its identity in X-Remote-* headers and without its token", async () => {
    const created = await api.post(FLUNDERS, { apiVersion: WARDLE_GV, kind: 'Flunder', metadata: { name: 'one' } }, as('alice'))
    assert.equal(created.status, 201, created.text)
    const list = await api.get(FLUNDERS, as('alice'))
    assert.equal(list.status, 200, list.text)
    assert.deepEqual(
      list.body.items.map((f: { metadata: { name: string } }) => f.metadata.name),
      ['one'],
    )
    const seen = ext.seen.filter((s) => s.path.startsWith(FLUNDERS)).at(-1)!
    assert.equal(seen.clientCommonName, 'front-proxy-client')
    assert.equal(seen.user, 'alice')
    assert.deepEqual(seen.groups, ['dev', 'system:authenticated'])
    assert.deepEqual(seen.extra, { 'scopes.example/team': ['blue'] })
    assert.deepEqual(seen.raw.filter(([n]) => n === 'x-remote-uid').map(([, v]) => v), ['a-1'])
    assert.equal(seen.raw.find(([n]) => n === 'authorization'), undefined, 'the bearer token must not reach the extension server')
  })

  it('passes the extension server\'s answer on byte for byte, even to curl (upstream indents only what it encodes itself)', async () => {
    const list = await api.get(FLUNDERS, as('alice', { 'user-agent': 'curl/8.5.0' }))
    assert.equal(list.status, 200, list.text)
    assert.equal(list.text, JSON.stringify(JSON.parse(list.text)), 'the compact text the extension server wrote')
    // The server's own answers are still indented for curl (here the Status of a refusal: alice may not read namespaces).
    const own = await api.get('/api/v1/namespaces/default', as('alice', { 'user-agent': 'curl/8.5.0' }))
    assert.equal(own.status, 403)
    assert.match(own.text, /^\{\n {2}"kind": "Status",\n/)
  })

  it('streams a watch from the extension server', async () => {
    const res = await api.server.fetch(
      new Request(`http://in-process${FLUNDERS}?watch=true`, { headers: { authorization: 'Bearer alice-token' } }),
      {},
    )
    assert.equal(res.status, 200)
    const reader = res.body!.getReader()
    await api.post(FLUNDERS, { apiVersion: WARDLE_GV, kind: 'Flunder', metadata: { name: 'two' } }, as('alice'))
    let text = ''
    while (!text.includes('"two"')) {
      const { done, value } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    await reader.cancel()
    assert.match(text, /"type":"ADDED".*"name":"two"/s)
  })

  it('does not pass on an X-Remote-User or X-Remote-Group header a caller forged', async () => {
    const r = await api.get(FLUNDERS, as('alice', { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters', 'X-Remote-Extra-Scopes': 'all' }))
    assert.equal(r.status, 200)
    // The aggregator's availability checks reach the extension server too, at any moment: look at this request.
    const seen = ext.seen.filter((s) => s.path.startsWith(FLUNDERS)).at(-1)!
    assert.equal(seen.user, 'alice')
    assert.ok(!seen.groups.includes('system:masters'), JSON.stringify(seen.groups))
    assert.deepEqual(seen.raw.filter(([n]) => n === 'x-remote-user').map(([, v]) => v), ['alice'])
    assert.equal(seen.extra['scopes'], undefined)
  })

  it('refuses an unauthorized caller with 403 before anything reaches the extension server', async () => {
    const flunderRequests = () => ext.seen.filter((s) => s.path.startsWith(FLUNDERS)).length
    const before = flunderRequests()
    const r = await api.post(FLUNDERS, { apiVersion: WARDLE_GV, kind: 'Flunder', metadata: { name: 'bobs' } }, as('bob'))
    assert.equal(r.status, 403)
    assert.equal(r.body.reason, 'Forbidden')
    assert.match(r.body.message, /User "bob" cannot create resource "flunders" in API group "wardle.example.com" in the namespace "wardle"/)
    assert.equal(flunderRequests(), before)
    assert.equal(ext.flunders.has('wardle/bobs'), false)
  })

  it('lists the aggregated group in legacy and aggregated discovery', async () => {
    const legacy = await api.get('/apis')
    const group = legacy.body.groups.find((g: { name: string }) => g.name === WARDLE)
    assert.deepEqual(group, { name: WARDLE, versions: [{ groupVersion: WARDLE_GV, version: 'v1alpha1' }], preferredVersion: { groupVersion: WARDLE_GV, version: 'v1alpha1' } })
    const groupDoc = await api.get(`/apis/${WARDLE}`)
    assert.equal(groupDoc.body.kind, 'APIGroup')
    const resources = await api.get(`/apis/${WARDLE_GV}`)
    assert.equal(resources.body.resources[0].name, 'flunders')
    const aggregated = await api.get('/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })
    const item = aggregated.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === WARDLE)
    assert.equal(item.versions[0].version, 'v1alpha1')
    assert.equal(item.versions[0].freshness, 'Current')
    assert.deepEqual(item.versions[0].resources[0], {
      resource: 'flunders',
      responseKind: { group: WARDLE, version: 'v1alpha1', kind: 'Flunder' },
      scope: 'Namespaced',
      singularResource: 'flunder',
      verbs: ['create', 'delete', 'get', 'list', 'watch'],
      shortNames: ['fl'],
      subresources: [{ subresource: 'status', responseKind: { group: WARDLE, version: 'v1alpha1', kind: 'Flunder' }, verbs: ['get'] }],
    })
  })

  it("tells the extension server the path asked for, its own location and the client's address, and drops the CORS headers it answers", async () => {
    ext.cors.add(FLUNDERS)
    const r = await api.get(FLUNDERS, { connection: { remoteAddress: '::ffff:192.0.2.7' }, headers: { authorization: 'Bearer alice-token', 'x-forwarded-for': '198.51.100.1' } })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('access-control-allow-origin'), null)
    assert.equal(r.headers.get('access-control-allow-credentials'), null)
    const seen = ext.seen.filter((s) => s.path === FLUNDERS).at(-1)!
    const header = (name: string) => seen.raw.filter(([n]) => n === name).map(([, v]) => v)
    assert.deepEqual(header('x-forwarded-uri'), [FLUNDERS])
    assert.deepEqual(header('x-forwarded-host'), [`127.0.0.1:${ext.port}`])
    assert.deepEqual(header('x-forwarded-proto'), ['https'])
    assert.deepEqual(header('x-forwarded-for'), ['198.51.100.1, 192.0.2.7'])
  })

  it('refuses a redirect from the extension server with 502', async () => {
    ext.redirects.add(`${FLUNDERS}/trap`)
    const r = await api.get(`${FLUNDERS}/trap`, as('alice'))
    assert.equal(r.status, 502)
    assert.equal(r.text, 'the backend attempted to redirect this request, which is not permitted')
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(r.headers.get('location'), null)
  })

  it('answers 504 at the deadline of a request its extension server never answers, and gives up the backend connection', async () => {
    ext.stalls.add(`${FLUNDERS}/stalled`)
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.get(`${FLUNDERS}/stalled?timeout=1s`, as('alice'))))
    for (const r of answers) {
      assert.equal(r.status, 504)
      assert.equal(r.body.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded')
    }
    // Upstream cancels the request's context at its deadline, and the aggregator's outbound request with it.
    await untilPasses(async () => assert.equal(ext.held, 0, 'connections to the extension server left open'), 5_000)
  })

  it('cuts a relayed answer that is still streaming at the deadline', async () => {
    ext.drips.add(`${FLUNDERS}/dripping`)
    const res = await api.server.fetch(new Request(`http://in-process${FLUNDERS}/dripping?timeout=1s`, as('alice')), {})
    assert.equal(res.status, 200)
    await assert.rejects(res.text(), 'the body ended without an error at its deadline')
    await untilPasses(async () => assert.equal(ext.held, 0, 'connections to the extension server left open'), 5_000)
  })

  it("checks availability by the discovery answer's status as upstream: a backend that never answers fails in Go's words, one whose body drips passes", async () => {
    ext.stalls.add(`/apis/${WARDLE}/v1beta1`)
    ext.drips.add(`/apis/${WARDLE}/v1beta2`)
    for (const version of ['v1beta1', 'v1beta2']) {
      const created = await api.post(APISERVICES, apiService(`${version}.${WARDLE}`, WARDLE, version, { namespace: 'wardle', name: 'api', port: 443 }, ext.caBundle))
      assert.equal(created.status, 201, created.text)
    }
    const stalled = await waitForCondition(`v1beta1.${WARDLE}`, 'FailedDiscoveryCheck')
    const url = `https://127.0.0.1:${ext.port}/apis/${WARDLE}/v1beta1`
    assert.equal(stalled.message, `failing or missing response from ${url}: Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
    assert.equal((await waitForCondition(`v1beta2.${WARDLE}`, 'Passed')).status, 'True')
    for (const version of ['v1beta1', 'v1beta2']) assert.equal((await api.delete(`${APISERVICES}/${version}.${WARDLE}`)).status, 200)
  })

  it('reports ServiceNotFound and answers 503 for an APIService whose Service is missing', async () => {
    const created = await api.post(APISERVICES, apiService('v1.ghost.example.com', 'ghost.example.com', 'v1', { namespace: 'wardle', name: 'nobody', port: 443 }))
    assert.equal(created.status, 201, created.text)
    const condition = await waitForCondition('v1.ghost.example.com', 'ServiceNotFound')
    assert.equal(condition.status, 'False')
    assert.equal(condition.message, 'service/nobody in "wardle" is not present')
    const r = await api.get('/apis/ghost.example.com/v1/things')
    assert.equal(r.status, 503)
    assert.equal(r.body.reason, 'ServiceUnavailable')
    assert.equal(r.body.message, 'service unavailable')
  })

  it('reports FailedDiscoveryCheck when nothing answers at the endpoint', async () => {
    await api.post('/api/v1/namespaces/wardle/services', { metadata: { name: 'down' }, spec: { ports: [{ name: 'https', port: 443 }] } })
    await api.post('/api/v1/namespaces/wardle/endpoints', { metadata: { name: 'down' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 1 }] }] })
    await api.post(APISERVICES, apiService('v1.down.example.com', 'down.example.com', 'v1', { namespace: 'wardle', name: 'down', port: 443 }))
    const condition = await waitForCondition('v1.down.example.com', 'FailedDiscoveryCheck')
    assert.match(condition.message, /^failing or missing response from https:\/\/127\.0\.0\.1:1\/apis\/down\.example\.com\/v1: .*connection refused/)
  })

  it('puts back the local APIService of a built-in group that someone pointed at a Service', async () => {
    const current = await api.get(`${APISERVICES}/v1.apps`)
    const hijacked = structuredClone(current.body)
    hijacked.spec.service = { namespace: 'wardle', name: 'api', port: 443 }
    hijacked.spec.insecureSkipTLSVerify = true
    const r = await api.put(`${APISERVICES}/v1.apps`, hijacked)
    assert.equal(r.status, 200, r.text)
    const appsRequests = () => ext.seen.filter((s) => s.path.startsWith('/apis/apps/v1/namespaces/')).length
    const deployments = await api.get('/apis/apps/v1/namespaces/wardle/deployments')
    assert.equal(deployments.status, 200)
    assert.equal(deployments.body.kind, 'DeploymentList')
    assert.equal(appsRequests(), 0, 'a built-in group is never proxied')
    await untilPasses(async () => {
      const restored = await api.get(`${APISERVICES}/v1.apps`)
      assert.equal(restored.body.spec.service, undefined)
    })
  })
})
