/**
 * `/metrics` through fetch: after a few requests the scrape parses strictly
 * as Prometheus text and carries upstream's request, watch, storage,
 * authentication, authorization and admission metrics with their labels and
 * buckets, the counters having moved; the metrics flags filter what is
 * shown; and only who may `get /metrics` (system:monitoring) reads it.
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
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
]
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, connection: {} })
const asAdmin = as('admin-token')
const CM = '/api/v1/namespaces/default/configmaps'
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })

async function start(options: ApiServerOptions = {}): Promise<{ server: ApiServer; api: TestClient }> {
  const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'], ...options })
  await server.ready
  return { server, api: new TestClient(server) }
}

async function scrape(api: TestClient): Promise<Map<string, PromFamily>> {
  const res = await api.get('/metrics', as('monitor-token'))
  assert.equal(res.status, 200, res.text)
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  return parsePrometheusText(res.text)
}

const requestLabels = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver' }

describe('/metrics', () => {
  let server: ApiServer
  let api: TestClient
  before(async () => {
    ;({ server, api } = await start())
  })
  after(() => server.shutdown())

  it('counts requests with upstream labels, codes and dry run, and times them in upstream buckets', async () => {
    assert.equal((await api.post(CM, cm('one'), asAdmin)).status, 201)
    assert.equal((await api.post(`${CM}?dryRun=All`, cm('two'), asAdmin)).status, 201)
    assert.equal((await api.get(`${CM}/one`, asAdmin)).status, 200)
    assert.equal((await api.get(`${CM}/missing`, asAdmin)).status, 404)
    assert.equal((await api.get(CM, asAdmin)).status, 200)
    const families = await scrape(api)
    const total = families.get('apiserver_request_total')
    assert.equal(total?.type, 'counter')
    assert.match(total?.help ?? '', /^\[STABLE\] /)
    // The verb is the HTTP method's, as upstream reports it: a create is a POST.
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'CREATE', dry_run: '', scope: 'resource', code: '201' }), undefined)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'POST', dry_run: '', scope: 'resource', code: '201' }), 1)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'POST', dry_run: 'All', scope: 'resource', code: '201' }), 1)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'GET', dry_run: '', scope: 'resource', code: '200' }), 1)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'GET', dry_run: '', scope: 'resource', code: '404' }), 1)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'LIST', dry_run: '', scope: 'namespace', code: '200' }), 1)

    const duration = families.get('apiserver_request_duration_seconds')
    assert.equal(duration?.type, 'histogram')
    const bounds = duration?.samples
      .filter((s) => s.name.endsWith('_bucket') && s.labels.verb === 'LIST' && s.labels.resource === 'configmaps')
      .map((s) => s.labels.le)
    assert.deepEqual(bounds, ['0.005', '0.025', '0.05', '0.1', '0.2', '0.4', '0.6', '0.8', '1', '1.25', '1.5', '2', '3', '4', '5', '6', '8', '10', '15', '20', '30', '45', '60', '+Inf'])
    assert.equal(sampleValue(families, 'apiserver_request_duration_seconds_count', { ...requestLabels, verb: 'LIST', dry_run: '', scope: 'namespace' }), 1)

    const sizes = families.get('apiserver_response_sizes')?.samples.filter((s) => s.name.endsWith('_bucket') && s.labels.verb === 'GET' && s.labels.resource === 'configmaps')
    assert.deepEqual(
      sizes?.map((s) => s.labels.le),
      ['1000', '10000', '100000', '1e+06', '1e+07', '1e+08', '1e+09', '+Inf'],
    )
    assert.equal(sampleValue(families, 'apiserver_response_sizes_count', { ...requestLabels, verb: 'GET', scope: 'resource' }), 2)
    assert.ok((sampleValue(families, 'apiserver_response_sizes_sum', { ...requestLabels, verb: 'GET', scope: 'resource' }) ?? 0) > 100)
  })

  it('labels server-side apply APPLY and a health path by its path, and leaves unknown resources and uninstrumented paths out', async () => {
    const apply = await api.patch(`${CM}/applied?fieldManager=test`, cm('applied'), 'application/apply-patch+yaml', asAdmin)
    assert.equal(apply.status, 201, apply.text)
    assert.equal((await api.get('/apis/example.com/v1/widgets', asAdmin)).status, 404)
    assert.equal((await api.get('/no-such-path-here', asAdmin)).status, 404)
    assert.equal((await api.get('/version', asAdmin)).status, 200)
    assert.equal((await api.get('/readyz', asAdmin)).status, 200)
    const families = await scrape(api)
    assert.equal(sampleValue(families, 'apiserver_request_total', { ...requestLabels, verb: 'APPLY', scope: 'resource', code: '201' }), 1)
    // Upstream instruments the health endpoints (with an empty component), not /version or /metrics.
    assert.equal(sampleValue(families, 'apiserver_request_total', { verb: 'GET', group: '', resource: '', subresource: '/readyz', scope: '', component: '', code: '200' }), 1)
    const series = families.get('apiserver_request_total')?.samples ?? []
    const unrecorded = ['/no-such-path-here', '/version', '/metrics']
    assert.equal(series.filter((s) => s.labels.resource === 'widgets' || unrecorded.includes(s.labels.subresource ?? '')).length, 0)
  })

  it('counts open watches and the events sent to them, and the storage calls by operation', async () => {
    const watch = await server.fetch(new Request(`http://in-process${CM}?watch=1&resourceVersion=0`, { headers: asAdmin.headers }), {})
    assert.equal(watch.status, 200)
    const reader = watch.body!.getReader()
    assert.equal((await reader.read()).done, false)
    const open = { ...requestLabels, verb: 'WATCH', scope: 'namespace' }
    let families = await scrape(api)
    assert.equal(sampleValue(families, 'apiserver_longrunning_requests', open), 1)
    await reader.cancel()
    // The watch ends as its reader goes; the gauge follows once the server sees it.
    for (let i = 0; i < 100; i++) {
      families = await scrape(api)
      if (sampleValue(families, 'apiserver_longrunning_requests', open) === 0) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.equal(sampleValue(families, 'apiserver_longrunning_requests', open), 0)
    assert.ok((sampleValue(families, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' }) ?? 0) >= 1)
    assert.ok((sampleValue(families, 'apiserver_watch_events_sizes_count', { group: '', version: 'v1', kind: 'ConfigMap' }) ?? 0) >= 1)
    // Deprecated in 1.23 and gone from upstream's 1.32 scrape.
    assert.equal(families.has('apiserver_registered_watchers'), false)
    assert.ok((sampleValue(families, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' }) ?? 0) >= 2)
    assert.equal(families.get('etcd_request_duration_seconds')?.type, 'histogram')
  })

  it('counts authentication and authorization attempts by result, and the authorizers decisions', async () => {
    assert.equal((await api.get(CM, as('no-such-token'))).status, 401)
    assert.equal((await api.get(CM, as('user-token'))).status, 403)
    const families = await scrape(api)
    assert.ok((sampleValue(families, 'authentication_attempts', { result: 'success' }) ?? 0) >= 1)
    // A token no authenticator accepts is an error to upstream's filter (a missing credential would be a failure).
    assert.equal(sampleValue(families, 'authentication_attempts', { result: 'error' }), 1)
    assert.equal(sampleValue(families, 'authentication_attempts', { result: 'failure' }), undefined)
    assert.ok((sampleValue(families, 'authenticated_user_requests', { username: 'other' }) ?? 0) >= 2)
    assert.ok((sampleValue(families, 'authentication_duration_seconds_count', { result: 'success' }) ?? 0) >= 1)
    assert.ok((sampleValue(families, 'authorization_attempts_total', { result: 'allowed' }) ?? 0) >= 1)
    // RBAC has no rule for jane: no authorizer allows, so the filter refuses on no opinion.
    assert.equal(sampleValue(families, 'authorization_attempts_total', { result: 'no-opinion' }), 1)
    assert.ok((sampleValue(families, 'apiserver_authorization_decisions_total', { type: 'RBAC', name: 'rbac', decision: 'allowed' }) ?? 0) >= 1)
  })

  it('times admission by step and by plugin', async () => {
    assert.equal((await api.post(CM, cm('admitted'), asAdmin)).status, 201)
    const families = await scrape(api)
    assert.ok((sampleValue(families, 'apiserver_admission_step_admission_duration_seconds_count', { operation: 'CREATE', rejected: 'false', type: 'validate' }) ?? 0) >= 1)
    assert.ok((sampleValue(families, 'apiserver_admission_controller_admission_duration_seconds_count', { name: 'NamespaceLifecycle', operation: 'CREATE', rejected: 'false', type: 'admit' }) ?? 0) >= 1)
  })

  it('resets every labelled series on DELETE with profiling on, as upstream\'s handler with reset; reads them on DELETE without', async () => {
    const { server: resettable, api: own } = await start()
    const { server: plain, api: noProfiling } = await start({ serving: { profiling: false } })
    try {
      const created = { ...requestLabels, verb: 'POST', dry_run: '', scope: 'resource', code: '201' }
      for (const name of ['r1', 'r2']) assert.equal((await own.post(CM, cm(name), asAdmin)).status, 201)
      assert.equal(sampleValue(await scrape(own), 'apiserver_request_total', created), 2)

      const refused = await own.delete('/metrics', as('monitor-token'))
      assert.equal(refused.status, 403)
      assert.equal(refused.body.message, 'forbidden: User "prometheus" cannot delete path "/metrics"')

      const reset = await own.delete('/metrics', asAdmin)
      assert.equal(reset.status, 200)
      assert.equal(reset.headers.get('content-type'), 'text/plain; charset=utf-8')
      assert.equal(reset.text, 'metrics reset\n')
      const after = await scrape(own)
      assert.equal(sampleValue(after, 'apiserver_request_total', created), undefined, 'the series is still there')
      assert.equal(after.has('apiserver_request_duration_seconds'), false, 'a histogram with no series left is still listed')

      // A series starts again from zero when next counted.
      assert.equal((await own.post(CM, cm('r3'), asAdmin)).status, 201)
      assert.equal(sampleValue(await scrape(own), 'apiserver_request_total', created), 1)

      // Without profiling, DELETE reads the metrics as any method does upstream, and resets nothing.
      assert.equal((await noProfiling.post(CM, cm('p1'), asAdmin)).status, 201)
      const read = await noProfiling.delete('/metrics', asAdmin)
      assert.equal(read.status, 200)
      assert.equal(read.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
      assert.equal(sampleValue(parsePrometheusText(read.text), 'apiserver_request_total', created), 1)
      assert.equal(sampleValue(await scrape(noProfiling), 'apiserver_request_total', created), 1)
    } finally {
      await Promise.all([resettable.shutdown(), plain.shutdown()])
    }
  })

  it('serves the health check SLIs on /metrics/slis, counted by each run of a health endpoint\'s root, as upstream', async () => {
    const { server: own, api: sli } = await start()
    try {
      const slis = async () => {
        const res = await sli.get('/metrics/slis', as('monitor-token'))
        assert.equal(res.status, 200, res.text)
        assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
        return parsePrometheusText(res.text)
      }
      const verbose = await sli.get('/readyz?verbose', as('monitor-token'))
      const checks = [...verbose.text.matchAll(/^\[\+\](\S+) ok$/gm)].map((m) => m[1]!)
      assert.ok(checks.includes('ping') && checks.length > 1, verbose.text)
      for (const path of ['/readyz', '/readyz?exclude=ping', '/readyz/ping', '/livez']) {
        assert.equal((await sli.get(path, as('monitor-token'))).status, 200, path)
      }
      const families = await slis()
      assert.deepEqual([...families.keys()].sort(), ['kubernetes_healthcheck', 'kubernetes_healthchecks_total'])
      assert.equal(families.get('kubernetes_healthcheck')?.type, 'gauge')
      assert.match(families.get('kubernetes_healthcheck')?.help ?? '', /^\[STABLE\] /)
      assert.equal(families.get('kubernetes_healthchecks_total')?.type, 'counter')
      assert.equal(sampleValue(families, 'kubernetes_healthcheck', { name: 'ping', type: 'readyz' }), 1)
      // The root ran ping twice; the excluded run and the check's own path are not counted.
      assert.equal(sampleValue(families, 'kubernetes_healthchecks_total', { name: 'ping', type: 'readyz', status: 'success' }), 2)
      assert.equal(sampleValue(families, 'kubernetes_healthchecks_total', { name: 'ping', type: 'livez', status: 'success' }), 1)
      assert.equal(sampleValue(families, 'kubernetes_healthchecks_total', { name: 'ping', type: 'healthz', status: 'success' }), undefined)
      for (const check of checks.filter((c) => c !== 'ping')) {
        assert.equal(sampleValue(families, 'kubernetes_healthchecks_total', { name: check, type: 'readyz', status: 'success' }), 3, check)
      }

      // A registry of its own: /metrics does not carry them.
      assert.equal((await scrape(sli)).has('kubernetes_healthcheck'), false)
      assert.equal((await sli.get('/metrics/slis', as('user-token'))).status, 403)

      const reset = await sli.delete('/metrics/slis', asAdmin)
      assert.equal(reset.status, 200)
      assert.equal(reset.text, 'metrics reset\n')
      assert.equal((await slis()).size, 0)
    } finally {
      await own.shutdown()
    }
  })

  it('refuses a user without get on /metrics with 403, and serves system:monitoring', async () => {
    const plain = await api.get('/metrics', as('user-token'))
    assert.equal(plain.status, 403)
    assert.equal(plain.body?.reason, 'Forbidden')
    assert.match(plain.body?.message ?? '', /forbidden: User "jane" cannot get path "\/metrics"/)
    assert.equal((await api.get('/metrics', as('monitor-token'))).status, 200)
  })
})

describe('the metrics flags', () => {
  it('drop disabled metrics and report label values outside the allow-list as unexpected', async () => {
    const { server, api } = await start({
      metrics: { disabled: ['apiserver_response_sizes'], allowLabels: { 'apiserver_request_total,resource': ['pods'] } },
    })
    try {
      assert.equal((await api.get(CM, asAdmin)).status, 200)
      const families = await scrape(api)
      assert.equal(families.has('apiserver_response_sizes'), false)
      assert.ok((sampleValue(families, 'apiserver_request_total', { resource: 'unexpected', verb: 'LIST', code: '200' }) ?? 0) >= 1)
      assert.equal(families.get('apiserver_request_total')?.samples.some((s) => s.labels.resource === 'configmaps'), false)
    } finally {
      await server.shutdown()
    }
  })
})
