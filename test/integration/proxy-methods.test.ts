/**
 * OPTIONS and HEAD through the proxy subresources, as upstream's proxy REST
 * connects them (GET, POST, PUT, PATCH, DELETE, HEAD and OPTIONS): each
 * reaches the backend with its method, with or without a path after
 * `proxy`. HEAD is authorized as a `get`, as upstream's request info names
 * it; OPTIONS gets no verb there, so only a rule of every verb grants it.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { ProxyTransport } from '../../core/proxy/transport.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { createTestServer, TestClient } from './harness.js'
import { as, grant, tokens } from './rbac-fixtures.js'

/** The pod's and node's address: global unicast, as upstream's proxy requires (a loopback pod IP is refused). */
const CLUSTER_IP = '192.0.2.10'
const POD = '/api/v1/namespaces/default/pods/web'

describe('OPTIONS and HEAD on proxy subresources', () => {
  let backend: Server
  let real: NodeProxyTransport
  let api: TestClient
  const seen: string[] = []

  before(async () => {
    backend = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`)
      res.writeHead(200, { 'content-type': 'text/plain', allow: 'GET, HEAD, OPTIONS' }).end(req.method === 'HEAD' ? undefined : `backend ${req.method} ${req.url}`)
    })
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve))
    const port = (backend.address() as AddressInfo).port
    // The Node runtime's own transport; the cluster network the pod's address lives on is this loopback server.
    real = nodeProxyTransport()
    const transport: ProxyTransport = { roundTrip: (target, request) => real.roundTrip({ ...target, origin: target.origin.replace(CLUSTER_IP, '127.0.0.1') }, request) }
    const server = createTestServer(
      { authentication: { tokens }, authorizationModes: ['RBAC'], bootstrapRbacPolicy: false, nodeAgent: { preferredAddressTypes: ['InternalIP'], timeoutMs: 3000 } },
      { proxyTransport: transport, checkProxyable: async () => {} },
    )
    await server.ready
    api = new TestClient(server)
    const created = [
      await api.post('/api/v1/nodes', { metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: CLUSTER_IP }] } }),
      await api.post('/api/v1/namespaces/default/pods', { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'web', ports: [{ containerPort: port }] }] } }),
      await api.post('/api/v1/namespaces/default/services', { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: port }] } }),
      await api.post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [CLUSTER_IP], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: 'default', name: 'web' } }],
        ports: [{ name: 'http', port, protocol: 'TCP' }],
      }),
      await api.patch(`${POD}/status`, { status: { podIP: CLUSTER_IP, podIPs: [{ ip: CLUSTER_IP }] } }, 'application/merge-patch+json'),
    ]
    for (const reply of created) assert.ok(reply.status === 201 || reply.status === 200, reply.text)
  })

  after(async () => {
    real?.close()
    backend?.closeAllConnections()
    await new Promise((resolve) => (backend ? backend.close(resolve) : resolve(undefined)))
  })

  it("reach a pod's backend with their method, with and without a path after proxy", async () => {
    seen.length = 0
    const options = await api.call('OPTIONS', `${POD}/proxy/items?x=1`, as('root'))
    assert.equal(options.status, 200, options.text)
    assert.equal(options.text, 'backend OPTIONS /items?x=1')
    assert.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS')
    const head = await api.call('HEAD', `${POD}/proxy/items`, as('root'))
    assert.equal(head.status, 200)
    assert.equal(head.text, '')
    // Nothing after proxy: OPTIONS goes to the backend's root; HEAD, as GET, is sent to proxy/ first (upstream's redirect).
    const bareOptions = await api.call('OPTIONS', `${POD}/proxy`, as('root'))
    assert.equal(bareOptions.text, 'backend OPTIONS /')
    const bareHead = await api.call('HEAD', `${POD}/proxy`, as('root'))
    assert.equal(bareHead.status, 301)
    assert.equal(bareHead.headers.get('location'), `${POD}/proxy/`)
    assert.equal((await api.call('HEAD', `${POD}/proxy/`, as('root'))).status, 200)
    assert.deepEqual(seen, ['OPTIONS /items?x=1', 'HEAD /items', 'OPTIONS /', 'HEAD /'])
  })

  it("reach a service's endpoint and a node the same way", async () => {
    seen.length = 0
    const port = (backend.address() as AddressInfo).port
    assert.equal((await api.call('OPTIONS', '/api/v1/namespaces/default/services/web:http/proxy/svc', as('root'))).text, 'backend OPTIONS /svc')
    assert.equal((await api.call('HEAD', '/api/v1/namespaces/default/services/web:http/proxy/svc', as('root'))).status, 200)
    assert.equal((await api.call('OPTIONS', `/api/v1/nodes/node-1:${port}/proxy/metrics`, as('root'))).text, 'backend OPTIONS /metrics')
    assert.equal((await api.call('HEAD', `/api/v1/nodes/node-1:${port}/proxy/metrics`, as('root'))).status, 200)
    assert.deepEqual(seen, ['OPTIONS /svc', 'HEAD /svc', 'OPTIONS /metrics', 'HEAD /metrics'])
  })

  it('authorize HEAD as a get and OPTIONS as no verb, which only `*` grants; a refused one reaches nothing', async () => {
    await grant(api, 'bob', 'pod-proxy-get', [{ verbs: ['get'], apiGroups: [''], resources: ['pods/proxy'] }], 'default')
    seen.length = 0
    assert.equal((await api.call('HEAD', `${POD}/proxy/items`, as('bob'))).status, 200)
    const refused = await api.call('OPTIONS', `${POD}/proxy/items`, as('bob'))
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.body.message, 'pods "web" is forbidden: User "bob" cannot  resource "pods/proxy" in API group "" in the namespace "default"')
    assert.equal((await api.call('HEAD', `${POD}/proxy/items`, as('carol'))).status, 403)
    assert.deepEqual(seen, ['HEAD /items'])
    await grant(api, 'bob', 'pod-proxy-all', [{ verbs: ['*'], apiGroups: [''], resources: ['pods/proxy'] }], 'default')
    assert.equal((await api.call('OPTIONS', `${POD}/proxy/items`, as('bob'))).text, 'backend OPTIONS /items')
  })
})
