/**
 * Auditing through `fetch`: the policy decides the level of each request,
 * events carry upstream's fields stage by stage, the authorization decision
 * is annotated, and every answer has an Audit-ID. Events go to a backend that
 * keeps them in memory (the port the log file and webhook backends fill).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AuditBackend, AuditEvent, AuditPolicy } from '../../core/audit/types.js'
import { createApiServer } from '../../core/index.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { TestClient } from './harness.js'

class KeptEvents implements AuditBackend {
  readonly name = 'kept'
  readonly events: AuditEvent[] = []
  async processEvents(events: readonly AuditEvent[]): Promise<void> {
    this.events.push(...events)
  }
}

const POLICY: AuditPolicy = {
  omitStages: ['RequestReceived'],
  rules: [
    { level: 'None', nonResourceURLs: ['/healthz*'] },
    { level: 'Metadata', resources: [{ group: '', resources: ['secrets'] }] },
    { level: 'RequestResponse', resources: [{ group: '', resources: ['configmaps'] }], omitManagedFields: true },
    { level: 'Metadata' },
  ],
}

async function start(policy: AuditPolicy = POLICY) {
  const kept = new KeptEvents()
  const tokens = [{ token: 'alice-token', user: { username: 'alice', groups: ['dev'] } }]
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, authentication: { tokens }, authorizationModes: ['AlwaysDeny'], audit: { policy, backends: [kept] } })
  await server.ready
  return { api: new TestClient(server), kept }
}

describe('audit', () => {
  it('records a create at RequestResponse with both objects, without managed fields, and the decision', async () => {
    const { api, kept } = await start()
    const r = await api.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } })
    assert.equal(r.status, 201)
    const id = r.headers.get('audit-id')
    assert.ok(id)
    const events = kept.events.filter((e) => e.auditID === id)
    assert.deepEqual(events.map((e) => e.stage), ['ResponseComplete'])
    const ev = events[0]!
    assert.equal(ev.level, 'RequestResponse')
    assert.equal(ev.verb, 'create')
    assert.equal(ev.requestURI, '/api/v1/namespaces/default/configmaps')
    assert.equal(ev.user.username, 'system:admin')
    assert.deepEqual(ev.objectRef, { resource: 'configmaps', namespace: 'default', name: 'cm', apiVersion: 'v1' })
    assert.equal(ev.responseStatus?.code, 201)
    assert.deepEqual((ev.requestObject as { data: unknown }).data, { a: 'b' })
    const stored = ev.responseObject as { metadata: Record<string, unknown> }
    assert.equal(stored.metadata['name'], 'cm')
    assert.equal('managedFields' in stored.metadata, false)
    assert.equal(ev.annotations?.['authorization.k8s.io/decision'], 'allow')
    assert.match(ev.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
  })

  it("records the body of a write the server's own client makes (a request holding its body in hand)", async () => {
    const kept = new KeptEvents()
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, audit: { policy: POLICY, backends: [kept] } })
    await server.ready
    const configMaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true }
    await server.client.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-client' }, data: { a: 'b' } })
    const event = kept.events.find((e) => e.verb === 'create' && e.objectRef?.name === 'from-client')
    assert.ok(event, 'an audit event for the create')
    assert.equal(event.level, 'RequestResponse')
    assert.deepEqual((event.requestObject as { data: unknown }).data, { a: 'b' })
    assert.equal(event.responseStatus?.code, 201)
    await server.shutdown()
  })

  it('keeps a secret at Metadata: no object of it reaches the backend', async () => {
    const { api, kept } = await start()
    const r = await api.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'hunter2' } })
    assert.equal(r.status, 201)
    const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id'))!
    assert.equal(ev.level, 'Metadata')
    assert.equal(ev.requestObject, undefined)
    assert.equal(ev.responseObject, undefined)
    assert.doesNotMatch(JSON.stringify(kept.events), /hunter2/)
  })

  it('keeps the values of a malformed secret body out of the refusal a Metadata event records, in Go\u2019s words', async () => {
    const { api, kept } = await start()
    // The JavaScript parser's message would quote the text around the mistake.
    const bodies = {
      '{"metadata":{"name":"s"},"stringData":{"password":hunter2}}': "invalid character 'h' looking for beginning of value",
      '{"metadata":{"name":"s"},"stringData":{"password":"hunter2", "x": ]}}': "invalid character ']' looking for beginning of value",
    }
    for (const [body, error] of Object.entries(bodies)) {
      const r = await api.call('POST', '/api/v1/namespaces/default/secrets', { body, headers: { 'content-type': 'application/json' } })
      assert.equal(r.status, 400)
      assert.equal(r.body.message, `couldn't get version/kind; json parse error: ${error}`)
      const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id'))!
      assert.equal(ev.level, 'Metadata')
      assert.equal(ev.responseStatus?.message, r.body.message)
    }
    assert.doesNotMatch(JSON.stringify(kept.events), /hunter2/)
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/s')).status, 404)
  })

  it('keeps a Status answer\u2019s fields at Metadata (a delete\u2019s Success), and only the code of any other answer', async () => {
    const { api, kept } = await start()
    await api.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gone' } })
    const read = await api.get('/api/v1/namespaces/default/secrets/gone')
    assert.equal(read.status, 200)
    const readEvent = kept.events.find((e) => e.auditID === read.headers.get('audit-id'))!
    assert.equal(readEvent.level, 'Metadata')
    assert.deepEqual(readEvent.responseStatus, { metadata: {}, code: 200 })
    const deleted = await api.delete('/api/v1/namespaces/default/secrets/gone')
    assert.equal(deleted.status, 200)
    const ev = kept.events.find((e) => e.auditID === deleted.headers.get('audit-id'))!
    assert.equal(ev.level, 'Metadata')
    assert.equal(ev.responseObject, undefined)
    assert.equal(ev.responseStatus?.code, 200)
    assert.equal(ev.responseStatus?.status, 'Success')
    assert.equal((ev.responseStatus?.details as { name?: string } | undefined)?.name, 'gone')
    const missing = await api.get('/api/v1/namespaces/default/secrets/gone?pretty=true')
    const missingEvent = kept.events.find((e) => e.auditID === missing.headers.get('audit-id'))!
    assert.equal(missingEvent.responseStatus?.code, 404)
    assert.equal(missingEvent.responseStatus?.reason, 'NotFound', 'a pretty-printed Status is one too')
  })

  it('records a refused request with the forbid decision and the Status it got, and stores nothing', async () => {
    const { api, kept } = await start()
    const r = await api.post(
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'denied' } },
      { headers: { authorization: 'Bearer alice-token' }, connection: {} },
    )
    assert.equal(r.status, 403)
    const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id'))!
    assert.equal(ev.user.username, 'alice')
    assert.equal(ev.annotations?.['authorization.k8s.io/decision'], 'forbid')
    assert.equal(ev.responseStatus?.code, 403)
    assert.equal(ev.responseStatus?.reason, 'Forbidden')
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/denied')).status, 404)
  })

  it('records a request authentication refused, as upstream: no user, ResponseStarted, 401 and what it tried; stores nothing', async () => {
    const { api, kept } = await start({ rules: [{ level: 'None', users: ['alice'] }, { level: 'RequestResponse' }] })
    const guess = await api.post(
      '/api/v1/namespaces/default/secrets',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'guessed' } },
      { headers: { authorization: 'Bearer guessed-token' }, connection: {} },
    )
    assert.equal(guess.status, 401)
    const events = kept.events.filter((e) => e.auditID === guess.headers.get('audit-id'))
    assert.deepEqual(
      events.map(({ stage, verb, requestURI, user, objectRef, responseStatus, requestObject }) => ({ stage, verb, requestURI, user, objectRef, responseStatus, requestObject })),
      [
        {
          stage: 'ResponseStarted',
          verb: 'create',
          requestURI: '/api/v1/namespaces/default/secrets',
          user: {},
          objectRef: { resource: 'secrets', namespace: 'default', apiVersion: 'v1' },
          responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 },
          requestObject: undefined,
        },
      ],
    )
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/guessed')).status, 404)
  })

  it('records a request without credentials refused where anonymous requests are off, and none the policy leaves out', async () => {
    const kept = new KeptEvents()
    const policy: AuditPolicy = { rules: [{ level: 'None', nonResourceURLs: ['/healthz'] }, { level: 'Metadata' }] }
    const server = createApiServer({ authentication: { anonymous: false }, authorizationModes: ['AlwaysDeny'], audit: { policy, backends: [kept] } })
    await server.ready
    const api = new TestClient(server)
    const bare = await api.get('/api/v1/namespaces', { connection: {} })
    assert.equal(bare.status, 401)
    const event = kept.events.find((e) => e.auditID === bare.headers.get('audit-id'))
    assert.equal(event?.stage, 'ResponseStarted')
    assert.equal(event?.responseStatus?.message, 'Authentication failed, no credentials provided')
    const health = await api.get('/healthz', { connection: {} })
    assert.equal(health.status, 401)
    assert.equal(kept.events.filter((e) => e.auditID === health.headers.get('audit-id')).length, 0)
    await server.shutdown()
  })

  it('writes nothing for level None, keeps the client\'s Audit-ID, and records every stage not omitted', async () => {
    const { api, kept } = await start({ rules: [{ level: 'None', nonResourceURLs: ['/healthz*'] }, { level: 'Metadata' }] })
    const before = kept.events.length
    const health = await api.get('/healthz')
    assert.ok(health.headers.get('audit-id'))
    assert.equal(kept.events.length, before)
    const r = await api.get('/api/v1/namespaces', { headers: { 'audit-id': 'my-own-id' } })
    assert.equal(r.headers.get('audit-id'), 'my-own-id')
    assert.deepEqual(kept.events.filter((e) => e.auditID === 'my-own-id').map((e) => e.stage), ['RequestReceived', 'ResponseComplete'])
  })

  it('keeps the first 1024 bytes of a long user agent, marked as cut, as upstream', async () => {
    const { api, kept } = await start()
    const agent = `${'a'.repeat(1024)}${'b'.repeat(15_000)}`
    const r = await api.get('/api/v1/namespaces', { headers: { 'user-agent': agent } })
    assert.equal(r.status, 200)
    const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id'))!
    assert.equal(ev.userAgent, `${'a'.repeat(1024)}...TRUNCATED`)
    const short = await api.get('/api/v1/namespaces', { headers: { 'user-agent': 'kubectl/v1.32.0' } })
    assert.equal(kept.events.find((e) => e.auditID === short.headers.get('audit-id'))!.userAgent, 'kubectl/v1.32.0')
  })

  it('records a watch as started, and complete when it ends', async () => {
    const { api, kept } = await start({ rules: [{ level: 'Metadata', verbs: ['watch'] }] })
    const r = await api.server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1'))
    assert.equal(r.status, 200)
    const id = r.headers.get('audit-id')!
    assert.deepEqual(kept.events.filter((e) => e.auditID === id).map((e) => e.stage), ['RequestReceived', 'ResponseStarted'])
    await r.text()
    assert.deepEqual(kept.events.filter((e) => e.auditID === id).map((e) => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete'])
  })
})

describe('audit of an oversized body', () => {
  it('answers 413 as without auditing and records the request without its object', async () => {
    const { api, kept } = await start({ rules: [{ level: 'Request' }] })
    const big = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(4 * 1024 * 1024) } })
    const r = await api.post('/api/v1/namespaces/default/configmaps', big)
    assert.equal(r.status, 413)
    const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id') && e.stage === 'ResponseComplete')!
    assert.equal(ev.responseStatus?.code, 413)
    assert.equal(ev.requestObject, undefined)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/big')).status, 404)
  })

  it('stops reading a streamed body past the limit, as without auditing, rather than holding all of it', async () => {
    const { api, kept } = await start({ rules: [{ level: 'Request' }] })
    // 256 MiB sent in 1 MiB chunks with no Content-Length; the server pulls each chunk it reads.
    const chunk = new Uint8Array(1 << 20).fill(0x20)
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled++ < 256) controller.enqueue(chunk.slice())
        else controller.close()
      },
    })
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' }
    const r = await api.server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps', init as RequestInit))
    assert.equal(r.status, 413)
    assert.equal(((await r.json()) as { reason: string }).reason, 'RequestEntityTooLarge')
    // A little past the 3 MiB limit, as the handler alone reads; not the whole body.
    assert.ok(pulled < 16, `${pulled} chunks of 1 MiB pulled`)
    const ev = kept.events.find((e) => e.auditID === r.headers.get('audit-id') && e.stage === 'ResponseComplete')!
    assert.equal(ev.responseStatus?.code, 413)
    assert.equal(ev.requestObject, undefined)
  })
})
