import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { RuntimeConfigError } from '../../core/resources/runtime-config.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, startServer } from './harness.js'

describe('--runtime-config on a running server', () => {
  it('stops serving a disabled group/version: gone from discovery, 404 on its paths', async () => {
    const client = await startServer({ runtimeConfig: { 'batch/v1': false } })
    const groups = await client.get('/apis')
    assert.equal(groups.status, 200)
    const names = (groups.body.groups as { name: string }[]).map((g) => g.name)
    assert.ok(!names.includes('batch'), `batch is not listed: ${names.join(', ')}`)
    assert.ok(names.includes('apps'))
    assert.equal((await client.get('/apis/batch/v1/namespaces/default/jobs')).status, 404)
    assert.equal((await client.get('/apis/apps/v1/namespaces/default/deployments')).status, 200)
  })

  it('refuses to start with a key upstream refuses, naming the key', () => {
    assert.throws(() => createTestServer({ runtimeConfig: { 'api/all': false } }), RuntimeConfigError)
  })
})

describe('TokenReview', () => {
  it('reports the user of a token the server accepts, and an unknown token as unauthenticated', async () => {
    const client = await startServer({ authentication: { tokens: [{ token: 'abc123', user: ADMIN_IDENTITY }] } })
    const review = (token: string) =>
      client.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } })
    const known = await review('abc123')
    assert.equal(known.status, 201, known.text)
    assert.equal(known.body.status.authenticated, true)
    assert.equal(known.body.status.user.username, ADMIN_IDENTITY.username)
    const unknown = await review('nope')
    assert.equal(unknown.status, 201, unknown.text)
    assert.notEqual(unknown.body.status.authenticated, true)
  })
})

describe('--kvstore-prefix', () => {
  it('puts every key under the prefix, as upstream lays keys out', async () => {
    const storage = new MemoryStorage()
    const server = createTestServer({ storagePrefix: '/custom/' }, { storage })
    await server.ready
    const res = await server.fetch(
      new Request('http://in-process/api/v1/namespaces/default/configmaps', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'keyed' }, data: { a: 'b' } }),
      }),
    )
    assert.equal(res.status, 201)
    assert.ok(await storage.get('/custom/configmaps/default/keyed'))
    assert.equal(await storage.get('/registry/configmaps/default/keyed'), undefined)
    await server.shutdown()
  })
})

describe('/metrics', () => {
  it('publishes how many objects each resource has stored (--kvstore-count-metric-poll-period)', async () => {
    const client = await startServer({ storageObjectCountPollMs: 20 })
    await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'one' } })
    await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'two' } })
    let text = ''
    // The two, and kube-system's legacy token tracking ConfigMap that start-up writes.
    for (let i = 0; i < 250 && !/apiserver_storage_objects\{resource="configmaps"\} 3\n/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 20))
      const res = await client.get('/metrics')
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
      text = res.text
    }
    assert.match(text, /^# TYPE apiserver_storage_objects gauge$/m)
    assert.match(text, /^apiserver_storage_objects\{resource="configmaps"\} 3$/m)
    assert.match(text, /^apiserver_storage_objects\{resource="namespaces"\} 4$/m)
    assert.match(text, /^apiserver_storage_objects\{resource="deployments\.apps"\} 0$/m)
    await client.server.shutdown()
  })
})
