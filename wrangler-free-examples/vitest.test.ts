/**
 * The server as a vitest fixture: one server for the file, seeded once,
 * `reset()` before each test, and the activity log (`record: true`) to
 * assert on what the code under test asked and wrote.
 *
 * Run (after `npm run build`, which the package self-reference resolves to):
 *   npx vitest run --config wrangler-free-examples/vitest.config.ts wrangler-free-examples/vitest.test.ts
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'

// What the code under test would do against a cluster: make sure a namespace has its app-config ConfigMap.
async function ensureAppConfig(server: ApiServer, namespace: string, data: Record<string, string>): Promise<'created' | 'updated' | 'unchanged'> {
  const url = `http://in-process/api/v1/namespaces/${namespace}/configmaps`
  const current = await server.fetch(new Request(`${url}/app-config`))
  if (current.status === 404) {
    const res = await server.fetch(
      new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'app-config' }, data }) }),
    )
    if (res.status !== 201) throw new Error(`creating app-config: ${res.status}`)
    return 'created'
  }
  const existing = (await current.json()) as { data?: Record<string, string> }
  if (JSON.stringify(existing.data ?? {}) === JSON.stringify(data)) return 'unchanged'
  const res = await server.fetch(
    new Request(`${url}/app-config`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ data }) }),
  )
  if (!res.ok) throw new Error(`updating app-config: ${res.status}`)
  return 'updated'
}

const server = createApiServer({
  embeddedIdentity: ADMIN_IDENTITY,
  record: true,
  objects: `
apiVersion: v1
kind: Namespace
metadata: { name: shop }
---
apiVersion: v1
kind: Namespace
metadata: { name: billing }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: app-config, namespace: billing }
data: { mode: fast }
`,
})

/** What the code under test did: its requests as verb/resource/name/status, and the ConfigMap changes. */
const activity = () => ({
  requests: server.activity.requests().map((r) => `${r.verb} ${r.resource}/${r.name} ${r.status}`),
  changes: server.activity
    .events()
    .filter((e) => e.resource === 'configmaps')
    .map((e) => `${e.type} ${e.namespace}/${e.name}`),
})

describe('ensureAppConfig', () => {
  beforeAll(() => server.ready)
  beforeEach(() => server.reset())
  afterAll(() => server.shutdown())

  it('creates the ConfigMap where it is missing', async () => {
    expect(await ensureAppConfig(server, 'shop', { mode: 'fast' })).toBe('created')
    expect(activity()).toEqual({ requests: ['get configmaps/app-config 404', 'create configmaps/ 201'], changes: ['ADDED shop/app-config'] })
  })

  it('starts from the seeded state again: the ConfigMap the previous test created is gone', async () => {
    const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/shop/configmaps/app-config'))
    expect(res.status).toBe(404)
  })

  it('writes nothing when the ConfigMap is already as wanted', async () => {
    expect(await ensureAppConfig(server, 'billing', { mode: 'fast' })).toBe('unchanged')
    expect(activity()).toEqual({ requests: ['get configmaps/app-config 200'], changes: [] })
  })

  it('patches a ConfigMap that differs', async () => {
    expect(await ensureAppConfig(server, 'billing', { mode: 'slow' })).toBe('updated')
    expect(activity().changes).toEqual(['MODIFIED billing/app-config'])
    const [change] = server.activity.events().filter((e) => e.resource === 'configmaps')
    expect(change?.object).toMatchObject({ data: { mode: 'slow' } })
  })
})
