/**
 * An embedded server whose start-up failed serves nothing without the parts
 * that failed: every request but the health checks is answered 503
 * ServiceUnavailable, /readyz names the failing check, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { ListOptions, ListResult } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, TestClient } from './harness.js'

/** A store whose lists of keys under one resource fail (its backend unreachable for them), or wait for `release`. */
class BrokenList extends MemoryStorage {
  private held: Promise<void> | undefined
  release: () => void = () => {}

  constructor(
    private readonly resource: string,
    mode: 'reject' | 'hold',
  ) {
    super()
    if (mode === 'hold') this.held = new Promise((resolve) => (this.release = resolve))
  }

  override async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    if (prefix.includes(`/${this.resource}/`)) {
      if (!this.held) throw new Error('connection refused')
      await this.held
    }
    return super.list(prefix, opts)
  }
}

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-failure', namespace: 'default' }, data: { a: 'b' } }

async function failedServer(resource: string): Promise<{ server: ApiServer; api: TestClient; storage: BrokenList }> {
  const storage = new BrokenList(resource, 'reject')
  const server = createTestServer({}, { storage })
  await assert.rejects(server.ready)
  return { server, api: new TestClient(server), storage }
}

function assertRefused(reply: { status: number; body: any }, check: string): void {
  assert.equal(reply.status, 503)
  assert.deepEqual(reply.body, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the server failed to start (the ${check} check failed) and serves no requests`,
    reason: 'ServiceUnavailable',
    code: 503,
  })
}

describe('an embedded server whose start-up failed', () => {
  it('answers 503 to a write and to reads when an admission index cannot load, and stores nothing', async () => {
    const { server, api, storage } = await failedServer('validatingwebhookconfigurations')
    try {
      assertRefused(await api.post('/api/v1/namespaces/default/configmaps', CONFIGMAP), 'informer-sync')
      assertRefused(await api.get('/api/v1/namespaces/default/configmaps'), 'informer-sync')
      assertRefused(await api.get('/api/v1/namespaces/default'), 'informer-sync')
      assertRefused(await api.get('/apis'), 'informer-sync')
      assert.equal((await storage.list('/registry/configmaps/')).items.length, 0, 'nothing was stored')
    } finally {
      await server.shutdown()
    }
  })

  it('keeps answering /readyz, /healthz and /livez, naming the failing check, and its reason on the check\'s own path', async () => {
    const { server, api } = await failedServer('validatingwebhookconfigurations')
    try {
      const ready = await api.get('/readyz')
      assert.equal(ready.status, 500)
      assert.match(ready.text, /^\[-\]informer-sync failed: reason withheld$/m)
      assert.match(ready.text, /readyz check failed\n$/)
      const one = await api.get('/readyz/informer-sync')
      assert.equal(one.status, 500)
      assert.equal(one.text, 'internal server error: start-up failed: connection refused\n')
      for (const endpoint of ['/healthz', '/livez']) {
        const reply = await api.get(endpoint)
        assert.equal(reply.status, 500, endpoint)
        assert.match(reply.text, /^\[-\]poststarthook\/bootstrap-controller failed: reason withheld$/m)
      }
    } finally {
      await server.shutdown()
    }
  })

  it('names poststarthook/crd-informer-synced when custom resource definitions cannot be listed', async () => {
    const { server, api, storage } = await failedServer('customresourcedefinitions')
    try {
      assertRefused(await api.post('/api/v1/namespaces/default/configmaps', CONFIGMAP), 'poststarthook/crd-informer-synced')
      assertRefused(await api.get('/api/v1/namespaces/default/configmaps/after-failure'), 'poststarthook/crd-informer-synced')
      assert.match((await api.get('/readyz')).text, /^\[-\]poststarthook\/crd-informer-synced failed: reason withheld$/m)
      assert.equal((await storage.list('/registry/configmaps/')).items.length, 0, 'nothing was stored')
    } finally {
      await server.shutdown()
    }
  })
})

describe('an embedded server still starting', () => {
  it('answers /readyz at once with the unfinished check, holds other requests, and serves them once ready', async () => {
    const storage = new BrokenList('validatingwebhookconfigurations', 'hold')
    const server = createTestServer({}, { storage })
    const api = new TestClient(server)
    try {
      const ready = await api.get('/readyz?verbose')
      assert.equal(ready.status, 500)
      assert.match(ready.text, /^\[-\]informer-sync failed: reason withheld$/m)
      assert.equal((await api.get('/readyz/informer-sync')).text, 'internal server error: not finished\n')
      const write = api.post('/api/v1/namespaces/default/configmaps', CONFIGMAP)
      storage.release()
      await server.ready
      assert.equal((await write).status, 201)
      assert.equal((await api.get('/readyz')).text, 'ok')
    } finally {
      await server.shutdown()
    }
  })
})
