/**
 * The request, authentication and authorization metrics carry the labels
 * kube-apiserver 1.32 writes, read from a scrape as Prometheus parses it:
 * the verb from the HTTP method (POST, PUT, PATCH, DELETE, GET, LIST,
 * WATCH, CONNECT), the route's scope, distinct dryRun values, only
 * requests that reached a handler (refusals with 401 and 403 are not
 * counted, a 429 from max-in-flight is, with a termination), and
 * authentication's `error` and `failure` results and coarse usernames.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { parsePrometheusText, type PromFamily, sampleValue } from '../helpers/prometheus-text.js'
import { TestClient } from './harness.js'

const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'monitor-token', user: { username: 'prometheus', groups: ['system:monitoring'] } },
  { token: 'mail-token', user: { username: 'jane@example.com', groups: ['dev'] } },
]
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, connection: {} })
const asAdmin = as('admin-token')
const CM = '/api/v1/namespaces/default/configmaps'
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })
const configmaps = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver', dry_run: '' }

async function start(options: ApiServerOptions = {}): Promise<{ server: ApiServer; api: TestClient }> {
  const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'], ...options })
  await server.ready
  return { server, api: new TestClient(server) }
}

async function scrape(api: TestClient): Promise<Map<string, PromFamily>> {
  const res = await api.get('/metrics', as('monitor-token'))
  assert.equal(res.status, 200, res.text)
  return parsePrometheusText(res.text)
}

/** Scrapes until `done` holds, at most 200 times 10 ms apart. */
async function scrapeUntil(api: TestClient, done: (families: Map<string, PromFamily>) => boolean): Promise<Map<string, PromFamily>> {
  let families = await scrape(api)
  for (let i = 0; i < 200 && !done(families); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    families = await scrape(api)
  }
  return families
}

const total = (families: Map<string, PromFamily>, labels: Record<string, string>) => sampleValue(families, 'apiserver_request_total', labels)

describe('request metrics labels as upstream writes them', () => {
  let server: ApiServer
  let api: TestClient
  before(async () => {
    ;({ server, api } = await start())
  })
  after(() => server.shutdown())

  it('names the verb by the HTTP method: POST, PUT, PATCH, DELETE for one object and a collection, GET and HEAD', async () => {
    assert.equal((await api.post(CM, cm('one'), asAdmin)).status, 201)
    assert.equal((await api.post(CM, cm('two'), asAdmin)).status, 201)
    const current = (await api.get(`${CM}/one`, asAdmin)).body
    assert.equal((await api.put(`${CM}/one`, { ...current, data: { a: 'c' } }, asAdmin)).status, 200)
    assert.equal((await api.patch(`${CM}/one`, { data: { a: 'd' } }, 'application/merge-patch+json', asAdmin)).status, 200)
    const head = await server.fetch(new Request(`http://in-process${CM}/one`, { method: 'HEAD', headers: asAdmin.headers }), {})
    assert.equal(head.status, 200)
    assert.equal((await api.delete(`${CM}/two`, asAdmin)).status, 200)
    assert.equal((await api.delete(`${CM}?labelSelector=none%3Dhere`, asAdmin)).status, 200)
    const families = await scrape(api)
    assert.equal(total(families, { ...configmaps, verb: 'POST', scope: 'resource', code: '201' }), 2)
    assert.equal(total(families, { ...configmaps, verb: 'PUT', scope: 'resource', code: '200' }), 1)
    assert.equal(total(families, { ...configmaps, verb: 'PATCH', scope: 'resource', code: '200' }), 1)
    assert.equal(total(families, { ...configmaps, verb: 'GET', scope: 'resource', code: '200' }), 2)
    assert.equal(total(families, { ...configmaps, verb: 'DELETE', scope: 'resource', code: '200' }), 1)
    // A deletecollection is a DELETE on the collection's route.
    assert.equal(total(families, { ...configmaps, verb: 'DELETE', scope: 'namespace', code: '200' }), 1)
    const verbs = new Set(families.get('apiserver_request_total')?.samples.map((s) => s.labels.verb))
    for (const verb of ['CREATE', 'UPDATE', 'DELETECOLLECTION', 'HEAD']) assert.equal(verbs.has(verb), false, verb)
  })

  it('keeps a list a LIST in its route scope, a field selector on the name notwithstanding, and across namespaces cluster', async () => {
    assert.equal((await api.get(`${CM}?fieldSelector=metadata.name%3Done`, asAdmin)).status, 200)
    assert.equal((await api.get('/api/v1/configmaps', asAdmin)).status, 200)
    const families = await scrape(api)
    assert.equal(total(families, { ...configmaps, verb: 'LIST', scope: 'namespace', code: '200' }), 1)
    assert.equal(total(families, { ...configmaps, verb: 'LIST', scope: 'cluster', code: '200' }), 1)
  })

  it('writes distinct dryRun values once, and invalid for a value other than All', async () => {
    assert.equal((await api.post(`${CM}?dryRun=All&dryRun=All`, cm('dry'), asAdmin)).status, 201)
    const refused = await api.post(`${CM}?dryRun=Maybe`, cm('dry'), asAdmin)
    assert.equal(refused.status, 422, refused.text)
    const families = await scrape(api)
    assert.equal(total(families, { ...configmaps, verb: 'POST', dry_run: 'All', scope: 'resource', code: '201' }), 1)
    assert.equal(total(families, { ...configmaps, verb: 'POST', dry_run: 'invalid', scope: 'resource', code: '422' }), 1)
    assert.equal(families.get('apiserver_request_total')?.samples.some((s) => s.labels.dry_run === 'All,All'), false)
  })

  it('records a watch as WATCH once it ends, timed whole, and counts it open meanwhile', async () => {
    const watch = await server.fetch(new Request(`http://in-process${CM}?watch=1&resourceVersion=0`, { headers: asAdmin.headers }), {})
    assert.equal(watch.status, 200)
    const reader = watch.body!.getReader()
    assert.equal((await reader.read()).done, false)
    const open = { ...configmaps, verb: 'WATCH', scope: 'namespace' }
    delete (open as Partial<typeof open>).dry_run
    let families = await scrape(api)
    assert.equal(sampleValue(families, 'apiserver_longrunning_requests', open), 1)
    assert.equal(total(families, { ...configmaps, verb: 'WATCH', scope: 'namespace', code: '200' }), undefined)
    await reader.cancel()
    families = await scrapeUntil(api, (f) => total(f, { ...configmaps, verb: 'WATCH', scope: 'namespace', code: '200' }) === 1)
    assert.equal(total(families, { ...configmaps, verb: 'WATCH', scope: 'namespace', code: '200' }), 1)
    assert.equal(sampleValue(families, 'apiserver_longrunning_requests', open), 0)
    assert.equal(sampleValue(families, 'apiserver_request_duration_seconds_count', { ...configmaps, verb: 'WATCH', scope: 'namespace' }), 1)
    // A ?watch= is served by the LIST route, whose answers upstream sizes.
    assert.equal(sampleValue(families, 'apiserver_response_sizes_count', { ...open }), 1)
  })

  it('names pods/log CONNECT, without counting it among the long-running requests', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }
    assert.equal((await api.post('/api/v1/namespaces/default/pods', pod, asAdmin)).status, 201)
    const log = await api.get('/api/v1/namespaces/default/pods/p/log', asAdmin)
    const families = await scrape(api)
    const labels = { group: '', version: 'v1', resource: 'pods', subresource: 'log', scope: 'resource', component: 'apiserver', dry_run: '' }
    assert.equal(total(families, { ...labels, verb: 'CONNECT', code: String(log.status) }), 1)
    assert.equal(families.get('apiserver_longrunning_requests')?.samples.some((s) => s.labels.subresource === 'log'), false)
  })

  it('records the aggregated discovery document under its path, and not the legacy group list', async () => {
    const aggregated = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
    assert.equal((await api.get('/apis', { ...asAdmin, headers: { ...asAdmin.headers, accept: aggregated } })).status, 200)
    assert.equal((await api.get('/apis', asAdmin)).status, 200)
    const families = await scrape(api)
    const labels = { verb: 'GET', dry_run: '', group: '', version: '', resource: '', subresource: 'apis', scope: '', component: 'apiserver', code: '200' }
    assert.equal(total(families, labels), 1)
  })

  it('leaves out requests refused before a handler with 401 or 403, and counts authentication results as upstream', async () => {
    const before = await scrape(api)
    assert.equal((await api.get(CM, as('no-such-token'))).status, 401)
    assert.equal((await api.get(`${CM}/one`, as('mail-token'))).status, 403)
    const families = await scrape(api)
    assert.equal(total(families, { ...configmaps, verb: 'GET', scope: 'resource', code: '403' }), undefined)
    assert.equal(families.get('apiserver_request_total')?.samples.some((s) => s.labels.code === '401'), false)
    // A refused token is an error; the user with an address is an email_id, never its name.
    assert.equal(sampleValue(families, 'authentication_attempts', { result: 'error' }), (sampleValue(before, 'authentication_attempts', { result: 'error' }) ?? 0) + 1)
    assert.equal(sampleValue(families, 'authenticated_user_requests', { username: 'email_id' }), 1)
    assert.equal(families.get('authenticated_user_requests')?.samples.some((s) => s.labels.username?.includes('@')), false)
  })

  it('counts the authorization filter decision only, not the checks impersonation makes', async () => {
    const allowed = (f: Map<string, PromFamily>) => sampleValue(f, 'authorization_attempts_total', { result: 'allowed' }) ?? 0
    const before = allowed(await scrape(api))
    const impersonating = { headers: { ...asAdmin.headers, 'impersonate-user': 'root', 'impersonate-group': 'system:masters' }, connection: {} }
    assert.equal((await api.get(`${CM}/one`, impersonating)).status, 200)
    // The scrape in between is authorized too: one for the GET, one for the scrape.
    assert.equal(allowed(await scrape(api)), before + 2)
  })
})

describe('a request with no credential and anonymous requests off', () => {
  it('is an authentication failure', async () => {
    const { server, api } = await start({ authentication: { tokens, anonymous: false } })
    try {
      assert.equal((await api.get(CM, { connection: {} })).status, 401)
      const families = await scrape(api)
      assert.equal(sampleValue(families, 'authentication_attempts', { result: 'failure' }), 1)
      assert.equal(sampleValue(families, 'authentication_attempts', { result: 'error' }), undefined)
    } finally {
      await server.shutdown()
    }
  })
})

/**
 * A create of ConfigMap `name` whose body is still coming until `release`
 * sends it (a second call does nothing): it holds a max-in-flight seat, or
 * outlives its `?timeout=`.
 */
function pendingCreate(server: ApiServer, name: string, query = ''): { answer: Promise<Response>; release: () => void } {
  let send: (() => void) | undefined
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      send = () => {
        send = undefined
        controller.enqueue(new TextEncoder().encode(JSON.stringify(cm(name))))
        controller.close()
      }
    },
  })
  const headers = { ...asAdmin.headers, 'content-type': 'application/json' }
  const answer = server.fetch(new Request(`http://in-process${CM}${query}`, { method: 'POST', body, headers, duplex: 'half' } as RequestInit), {})
  return { answer, release: () => send?.() }
}

describe('a request refused by max-in-flight', () => {
  it('is counted with code 429 in apiserver_request_total and as a termination', async () => {
    const { server, api } = await start({ serving: { priorityAndFairness: false, maxInFlight: { readOnly: 0, mutating: 1 } } })
    // A create whose body is still coming holds the one mutating seat.
    const pending = pendingCreate(server, 'held')
    try {
      const held = pending.answer
      const busy = await scrapeUntil(api, (f) => sampleValue(f, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) === 1)
      assert.equal(sampleValue(busy, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }), 1)
      const refused = await api.post(`${CM}?dryRun=All`, cm('refused'), as('mail-token'))
      assert.equal(refused.status, 429)
      pending.release()
      assert.equal((await held).status, 201)
      const families = await scrape(api)
      assert.equal(total(families, { ...configmaps, verb: 'POST', dry_run: 'All', scope: 'resource', code: '429' }), 1)
      const termination = { verb: 'POST', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver', code: '429' }
      assert.equal(sampleValue(families, 'apiserver_request_terminations_total', termination), 1)
      assert.equal(sampleValue(families, 'apiserver_request_duration_seconds_count', { ...configmaps, verb: 'POST', dry_run: 'All', scope: 'resource' }), undefined)
    } finally {
      pending.release()
      await server.shutdown()
    }
  })
})

describe('requests for paths of their own refused by max-in-flight', () => {
  it('grow no series per path: an anonymous caller picks the path before authorization', async () => {
    const { server, api } = await start({ serving: { priorityAndFairness: false, maxInFlight: { readOnly: 1, mutating: 1 } } })
    // A create whose body is still coming holds the one mutating seat.
    const pending = pendingCreate(server, 'held')
    try {
      const held = pending.answer
      await scrapeUntil(api, (f) => sampleValue(f, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) === 1)
      for (const path of ['/made-up-1', '/made-up-2', '/healthz']) assert.equal((await api.post(path, {}, { connection: {} })).status, 429)
      pending.release()
      assert.equal((await held).status, 201)
      const families = await scrape(api)
      const termination = (subresource: string) => ({ verb: 'POST', group: '', version: '', resource: '', subresource, scope: '', component: 'apiserver', code: '429' })
      assert.equal(sampleValue(families, 'apiserver_request_terminations_total', termination('')), 2)
      assert.equal(sampleValue(families, 'apiserver_request_terminations_total', termination('/healthz')), 1)
      const series = (await api.get('/metrics', as('monitor-token'))).text.split('\n').filter((line) => line.includes('made-up'))
      assert.deepEqual(series, [])
    } finally {
      pending.release()
      await server.shutdown()
    }
  })
})

describe('a request past its timeout', () => {
  it('is counted as a termination with 504', async () => {
    const { server, api } = await start()
    // A create whose body is still coming when its ?timeout= runs out.
    const pending = pendingCreate(server, 'late', '?timeout=100ms')
    try {
      const late = await pending.answer
      assert.equal(late.status, 504)
      pending.release()
      const families = await scrape(api)
      const termination = { verb: 'POST', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver', code: '504' }
      assert.equal(sampleValue(families, 'apiserver_request_terminations_total', termination), 1)
    } finally {
      pending.release()
      await server.shutdown()
    }
  })
})
