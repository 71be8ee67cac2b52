/**
 * Tracing as the daemon sets it up (runtimes/node/daemon/tracing.ts: the SDK, the
 * OTLP gRPC exporter, the parent-based sampler) against a real OTLP
 * collector on loopback: a request whose privileged client sent a sampled
 * `traceparent` arrives as a SERVER span of that trace under the client's
 * span, named as upstream names it, with its storage write as a child; an
 * ordinary user's `traceparent` neither chooses the trace nor forces
 * sampling; without a parent, samplingRatePerMillion decides.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createApiServer } from '../../core/index.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { type NodeTracing, startNodeTracing } from '../../runtimes/node/daemon/tracing.js'
import { TestClient } from './harness.js'
import { type OtlpCollector, startOtlpCollector } from './otlp-collector.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CLIENT_SPAN = '00f067aa0ba902b7'
const SAMPLED = `00-${TRACE_ID}-${CLIENT_SPAN}-01`

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } })

async function start(collector: OtlpCollector, samplingRatePerMillion?: number) {
  const tracing = startNodeTracing({ endpoint: collector.endpoint, ...(samplingRatePerMillion !== undefined ? { samplingRatePerMillion } : {}) })
  const tokens = [
    { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
    { token: 'root-token', user: { username: 'root', groups: ['system:masters'] } },
  ]
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, authentication: { tokens }, authorizationModes: ['AlwaysAllow'] }, { tracerProvider: tracing.tracerProvider })
  await server.ready
  return { api: new TestClient(server), tracing }
}

describe('tracing to an OTLP collector', () => {
  let collector: OtlpCollector
  const started: NodeTracing[] = []
  before(async () => {
    collector = await startOtlpCollector()
  })
  after(async () => {
    for (const t of started) await t.shutdown()
    await collector.close()
  })

  it('exports the request as a SERVER span of the client\'s trace, under its span, with the handler\'s span and the storage write below it (system:masters)', async () => {
    const { api, tracing } = await start(collector)
    started.push(tracing)
    const r = await api.post('/api/v1/namespaces/default/configmaps', configMap('traced'), {
      headers: { traceparent: SAMPLED, accept: 'application/json', 'user-agent': 'kubectl/v1.32.0', authorization: 'Bearer root-token' },
      connection: { remoteAddress: '127.0.0.1', protocol: 'HTTP/2.0' },
    })
    assert.equal(r.status, 201)
    await tracing.flush()
    const server = collector.spans.find((s) => s.attributes['audit-id'] === r.headers.get('audit-id') && s.kind === 2)
    assert.ok(server, JSON.stringify(collector.spans))
    assert.equal(server.name, 'POST /api/v1/namespaces/{:namespace}/configmaps')
    assert.equal(server.traceId, TRACE_ID)
    assert.equal(server.parentSpanId, CLIENT_SPAN)
    assert.equal(server.service, 'apiserver')
    assert.equal(server.attributes['http.method'], 'POST')
    assert.equal(server.attributes['http.target'], '/api/v1/namespaces/default/configmaps')
    assert.equal(server.attributes['http.status_code'], 201)
    // Upstream's create handler span sits between the request and the storage call, with the request's fields.
    const handler = collector.spans.find((s) => s.name === 'Create' && s.traceId === TRACE_ID)
    assert.ok(handler, JSON.stringify(collector.spans.map((s) => s.name)))
    assert.equal(handler.parentSpanId, server.spanId)
    assert.deepEqual(handler.attributes, {
      accept: 'application/json',
      'audit-id': r.headers.get('audit-id'),
      client: '127.0.0.1',
      protocol: 'HTTP/2.0',
      resource: 'configmaps',
      scope: 'resource',
      url: '/api/v1/namespaces/default/configmaps',
      'user-agent': 'kubectl/v1.32.0',
      verb: 'POST',
    })
    const write = collector.spans.find((s) => s.name === 'Create etcd3' && s.traceId === TRACE_ID)
    assert.ok(write, JSON.stringify(collector.spans.map((s) => s.name)))
    assert.equal(write.parentSpanId, handler.spanId)
    assert.equal(write.attributes['resource'], 'configmaps')
    assert.equal(write.attributes['audit-id'], r.headers.get('audit-id'))
    assert.match(String(write.attributes['key']), /configmaps\/default\/traced$/)
  })

  it('does not let an ordinary user choose the trace or force sampling with a traceparent', async () => {
    const { api, tracing } = await start(collector)
    started.push(tracing)
    const forged = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`
    const r = await api.get('/api/v1/namespaces/default/configmaps', { headers: { traceparent: forged, authorization: 'Bearer alice-token' }, connection: {} })
    assert.equal(r.status, 200)
    await tracing.flush()
    assert.equal(collector.spans.filter((s) => s.traceId === '1'.repeat(32)).length, 0)
    assert.equal(collector.spans.filter((s) => s.attributes['audit-id'] === r.headers.get('audit-id')).length, 0)
  })

  it('samples by samplingRatePerMillion without a trusted parent, linking an ordinary user\'s traceparent from a new trace', async () => {
    const { api, tracing } = await start(collector, 1_000_000)
    started.push(tracing)
    const forged = `00-${'3'.repeat(32)}-${'4'.repeat(16)}-00`
    const r = await api.get('/api/v1/namespaces/default/configmaps/missing', { headers: { traceparent: forged, authorization: 'Bearer alice-token' }, connection: {} })
    assert.equal(r.status, 404)
    await tracing.flush()
    const span = collector.spans.find((s) => s.attributes['audit-id'] === r.headers.get('audit-id') && s.kind === 2)
    assert.ok(span)
    assert.equal(span.name, 'GET /api/v1/namespaces/{:namespace}/configmaps/{:name}')
    assert.notEqual(span.traceId, '3'.repeat(32))
    assert.equal(span.parentSpanId, '')
    assert.deepEqual(span.links, [{ traceId: '3'.repeat(32), spanId: '4'.repeat(16) }])
    // The get handler's span is its child; a 404 is the client's, not an error of the server's.
    const handler = collector.spans.find((s) => s.name === 'Get' && s.traceId === span.traceId)
    assert.ok(handler, JSON.stringify(collector.spans.map((s) => s.name)))
    assert.equal(handler.parentSpanId, span.spanId)
    assert.equal(handler.statusCode, 0)
    assert.equal(handler.attributes['verb'], 'GET')
    assert.equal(handler.attributes['scope'], 'resource')
  })

  it('exports nothing for a request without a parent when samplingRatePerMillion is unset', async () => {
    const { api, tracing } = await start(collector)
    started.push(tracing)
    const r = await api.get('/api/v1/namespaces')
    assert.equal(r.status, 200)
    await tracing.flush()
    assert.equal(collector.spans.filter((s) => s.attributes['audit-id'] === r.headers.get('audit-id')).length, 0)
  })
})
