/**
 * `GET /`: the index of the paths the server lists, as upstream answers it
 * (`kubectl get --raw /`): every served group and group/version, custom
 * resources' too, each health check's path and the server's endpoints, sorted,
 * indented as Go writes it. It was a 404.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cronTabDefinition, installDefinition } from './crd-fixtures.js'
import { startServer } from './harness.js'

const tokens = [
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
]
const asUser = { headers: { authorization: 'Bearer user-token' }, connection: {} }
const asAdmin = { headers: { authorization: 'Bearer admin-token' }, connection: {} }

describe('the root index', () => {
  it('lists the served paths, sorted, as upstream indents its RootPaths', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['RBAC'], aggregation: {} })
    try {
      await installDefinition(api, cronTabDefinition())
      const reply = await api.get('/', asAdmin)
      assert.equal(reply.status, 200, reply.text)
      assert.equal(reply.headers.get('content-type'), 'application/json')
      const paths: string[] = JSON.parse(reply.text).paths
      assert.equal(reply.text, JSON.stringify({ paths }, null, 2), 'two-space indentation, no final newline')
      assert.deepEqual(paths, [...paths].sort())
      for (const path of [
        '/api',
        '/api/v1',
        '/apis',
        '/apis/',
        '/apis/apps',
        '/apis/apps/v1',
        '/apis/stable.example.com',
        '/apis/stable.example.com/v1',
        '/healthz',
        '/healthz/etcd',
        '/healthz/poststarthook/crd-informer-synced',
        '/livez/autoregister-completion',
        '/readyz/etcd-readiness',
        '/readyz/informer-sync',
        '/readyz/shutdown',
        '/metrics',
        '/metrics/slis',
        '/openapi/v2',
        '/openapi/v3',
        '/openapi/v3/',
        '/version',
      ])
        assert.ok(paths.includes(path), path)
      // Readiness checks are not health checks; what upstream registers unlisted stays unlisted.
      for (const path of ['/healthz/shutdown', '/healthz/informer-sync', '/debug/pprof', '/logs', '/api/v1/namespaces'])
        assert.ok(!paths.includes(path), path)
      assert.equal((await api.get('/index.html', asAdmin)).text, reply.text)
    } finally {
      await api.server.shutdown()
    }
  })

  it('is refused to a caller no rule grants the path, with upstream non-resource Forbidden', async () => {
    const api = await startServer({ authentication: { tokens }, authorizationModes: ['RBAC'] })
    const reply = await api.get('/', asUser)
    assert.equal(reply.status, 403)
    assert.equal(reply.body.message, 'forbidden: User "jane" cannot get path "/"')
  })
})
