/**
 * The serving filters through fetch: max-in-flight pools (with priority and
 * fairness off), the shutdown phases, HSTS, CORS and /livez's grace period.
 * Requests are held in flight by a store that waits at a gate.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer } from '../../core/index.js'
import { gracefulShutdown } from '../../core/lifecycle/shutdown.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { silentLogger } from '../../core/logging/logger.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { GatedStorage } from './gated-storage.js'
import { TestClient } from './harness.js'

const tokens = [
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
]
const asUser = { headers: { authorization: 'Bearer user-token' }, connection: {} }
const asAdmin = { headers: { authorization: 'Bearer admin-token' }, connection: {} }
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })
const CM = '/api/v1/namespaces/default/configmaps'

async function start(options: ApiServerOptions) {
  const storage = new GatedStorage()
  // Reads reach the gate only without the watch cache, which answers them from memory.
  const server = createApiServer({ authentication: { tokens }, watchCache: false, ...options }, { storage })
  await server.ready
  return { server, storage, api: new TestClient(server) }
}

describe('max-in-flight with priority and fairness off', () => {
  const limits = { serving: { priorityAndFairness: false, maxInFlight: { readOnly: 1, mutating: 1 } } }

  it('refuses a second read with 429, Retry-After and upstream\'s plain-text words while the pool is full, and serves the admin', async () => {
    const { api, storage } = await start(limits)
    storage.gating = false
    assert.equal((await api.post(CM, cm('slow'), asAdmin)).status, 201)
    storage.gating = true
    const held = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(1)
    const refused = await api.get(`${CM}/slow`, asUser)
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '1')
    // As Go's http.Error writes it in upstream's filter: no Status.
    assert.equal(refused.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(refused.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(refused.text, 'Too many requests, please try again later.\n')
    // The mutating pool is separate: a write still goes through.
    assert.equal((await api.post(CM, cm('other'), asUser)).status, 201)
    const admin = api.get(`${CM}/slow`, asAdmin)
    await storage.whenHeld(2)
    const metrics = await api.get('/metrics', asAdmin)
    assert.match(metrics.text, /apiserver_current_inflight_requests\{request_kind="readOnly"\} 1/)
    // Upstream counts the refusal in apiserver_request_total (its apiserver_dropped_requests_total is gone since 1.24's deprecation).
    assert.match(metrics.text, /apiserver_request_total\{code="429",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"\} 1/)
    assert.doesNotMatch(metrics.text, /apiserver_dropped_requests_total/)
    storage.open()
    assert.equal((await held).status, 200)
    assert.equal((await admin).status, 200)
    storage.gating = false
    assert.equal((await api.get(`${CM}/slow`, asUser)).status, 200, 'the slot is free again')
  })

  it('refuses a second write with 429 and stores nothing of it', async () => {
    const { api, storage } = await start(limits)
    const held = api.post(CM, cm('slow'), asUser)
    await storage.whenHeld(1)
    const refused = await api.post(CM, cm('refused'), asUser)
    assert.equal(refused.status, 429)
    assert.equal(refused.text, 'Too many requests, please try again later.\n')
    storage.open()
    assert.equal((await held).status, 201)
    assert.equal((await api.get(`${CM}/refused`, asAdmin)).status, 404)
  })

  it('keeps a large answer of bytes in hand counted until it has been read, and a small one not', async () => {
    const { api, server, storage } = await start(limits)
    storage.gating = false
    // One object of 400 kB: encoded at once (no streamed list), more than a socket's buffers take.
    assert.equal((await api.post(CM, { ...cm('large'), data: { a: 'x'.repeat(400_000) } }, asAdmin)).status, 201)
    const unread = await server.fetch(new Request(`http://in-process${CM}/large`, { headers: asUser.headers }), {})
    assert.equal(unread.status, 200)
    const refused = await api.get(`${CM}/slow`, asUser)
    assert.equal(refused.status, 429, 'the unread answer holds the only read slot')
    const body = (await unread.json()) as { data: { a: string } }
    assert.equal(body.data.a.length, 400_000)
    assert.equal((await api.get(`${CM}/large`, asUser)).status, 200, 'read to its end, the slot is free again')
    assert.equal((await api.post(CM, cm('small'), asAdmin)).status, 201)
    const small = await server.fetch(new Request(`http://in-process${CM}/small`, { headers: asUser.headers }), {})
    assert.equal(small.status, 200)
    assert.equal((await api.get(`${CM}/small`, asUser)).status, 200, 'a small answer is written as the handler returns')
    await small.arrayBuffer()
  })

  it('does not count watches', async () => {
    const { api, server } = await start(limits)
    const watch = await server.fetch(new Request(`http://in-process${CM}?watch=1`, { headers: asUser.headers }), {})
    assert.equal(watch.status, 200)
    assert.equal((await api.get(CM, asUser)).status, 200)
    await watch.body?.cancel()
    await server.shutdown()
  })

  it('0 turns a pool off', async () => {
    const { api, storage } = await start({ serving: { priorityAndFairness: false, maxInFlight: { readOnly: 0, mutating: 1 } } })
    storage.gating = false
    assert.equal((await api.post(CM, cm('slow'), asAdmin)).status, 201)
    storage.gating = true
    const held = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(1)
    const second = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(2)
    storage.open()
    assert.equal((await held).status, 200)
    assert.equal((await second).status, 200)
  })
})

describe('shutdown phases', () => {
  it('/readyz fails at once with its shutdown check while /healthz and /livez pass and requests are served', async () => {
    const { api, server } = await start({})
    let stopped = false
    const done = gracefulShutdown(server.lifecycle, { delayMs: 3000, sendRetryAfter: false, watchTerminationGraceMs: 0 }, { stopAccepting: () => (stopped = true) }, silentLogger)
    const readyz = await api.get('/readyz?verbose', asAdmin)
    assert.equal(readyz.status, 500)
    assert.match(readyz.text, /\[-\]shutdown failed: reason withheld/)
    assert.equal((await api.get('/healthz', asAdmin)).status, 200)
    assert.equal((await api.get('/livez', asAdmin)).status, 200)
    assert.equal((await api.get(CM, asUser)).status, 200)
    assert.equal(stopped, false)
    await done
    assert.equal(stopped, true, 'the listener stops once the delay is over')
  })

  it('after the delay, answers new requests 429 with Retry-After and Connection: close, lets the held one finish, then stops the listener', async () => {
    const { api, server, storage } = await start({ serving: { shutdownSendRetryAfter: true } })
    const held = api.post(CM, cm('slow'), asUser)
    await storage.whenHeld(1)
    let stopped = false
    const done = gracefulShutdown(server.lifecycle, { delayMs: 0, sendRetryAfter: true, watchTerminationGraceMs: 0 }, { stopAccepting: () => (stopped = true) }, silentLogger)
    const refused = await api.post(CM, cm('late'), asUser)
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '5')
    assert.equal(refused.headers.get('connection'), 'close')
    assert.equal(refused.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(refused.text, 'The apiserver is shutting down, please try again later.\n')
    assert.equal((await api.get('/healthz', asAdmin)).status, 200, 'probes are exempt')
    assert.equal(stopped, false, 'the listener stays open while a request is in flight')
    storage.open()
    assert.equal((await held).status, 201)
    await done
    assert.equal(stopped, true)
    assert.equal(await storage.get('/registry/configmaps/default/late'), undefined, 'the refused write stored nothing')
  })

  it('without send-retry-after, stops the listener at once and answers 503 on connections still open', async () => {
    const { api, server } = await start({})
    let stopped = false
    await gracefulShutdown(server.lifecycle, { delayMs: 0, sendRetryAfter: false, watchTerminationGraceMs: 0 }, { stopAccepting: () => (stopped = true) }, silentLogger)
    assert.equal(stopped, true)
    const refused = await api.post(CM, cm('late'), asUser)
    assert.equal(refused.status, 503)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.equal(refused.body.message, 'apiserver is shutting down')
  })

  it('ends open watches within the grace period', async () => {
    const { server } = await start({})
    const watch = await server.fetch(new Request(`http://in-process${CM}?watch=1`, { headers: asUser.headers }), {})
    assert.equal(server.lifecycle.openWatches, 1)
    const body = watch.text()
    await gracefulShutdown(server.lifecycle, { delayMs: 0, sendRetryAfter: false, watchTerminationGraceMs: 10_000 }, { stopAccepting: () => {} }, silentLogger)
    await body
    assert.equal(server.lifecycle.openWatches, 0)
  })
})

describe('HSTS and CORS', () => {
  it('adds Strict-Transport-Security to every answer, errors included', async () => {
    const { api } = await start({ serving: { hstsDirectives: ['max-age=31536000', 'includeSubDomains', 'preload'] } })
    for (const reply of [await api.get('/version', asUser), await api.get(`${CM}/missing`, asUser), await api.get(CM)]) {
      assert.equal(reply.headers.get('strict-transport-security'), 'max-age=31536000; includeSubDomains; preload')
    }
  })

  it('answers a preflight from an allowed origin with 204 and the CORS headers, before authentication', async () => {
    const { api } = await start({ serving: { corsAllowedOrigins: ['//example\\.com(:|$)'] } })
    const preflight = await api.call('OPTIONS', CM, { headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' }, connection: {} })
    assert.equal(preflight.status, 204)
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://example.com')
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'POST, GET, OPTIONS, PUT, DELETE, PATCH')
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true')
    const get = await api.get(CM, { ...asUser, headers: { ...asUser.headers, origin: 'https://example.com:8443' } })
    assert.equal(get.status, 200)
    assert.equal(get.headers.get('access-control-allow-origin'), 'https://example.com:8443')
    assert.equal(get.headers.get('access-control-expose-headers'), 'Date')
  })

  it('gives an origin that does not match no CORS headers, and its preflight goes through authentication', async () => {
    const { api } = await start({ serving: { corsAllowedOrigins: ['//example\\.com(:|$)'] } })
    const preflight = await api.call('OPTIONS', CM, { headers: { origin: 'https://example.com.evil.org' }, connection: {} })
    assert.equal(preflight.status, 401)
    assert.equal(preflight.headers.get('access-control-allow-origin'), null)
  })
})

describe('--livez-grace-period', () => {
  it('counts an unfinished post-start hook as healthy in /livez during the grace period only', async () => {
    let clock = 0
    // A post-start hook never finishes: the system priority classes cannot be written (retried, never fatal).
    const storage = new MemoryStorage()
    storage.create = () => Promise.reject(new Error('disk full'))
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, serving: { livezGracePeriodMs: 1000 } }, { storage, now: () => new Date(clock) })
    await server.ready.catch(() => {})
    const status = async (path: string) => (await server.fetch(new Request(`http://in-process${path}`))).status
    assert.equal(await status('/livez'), 200)
    assert.equal(await status('/livez/poststarthook/scheduling/bootstrap-system-priority-classes'), 200)
    assert.equal(await status('/readyz'), 500, 'readiness has no grace period')
    clock = 5000
    assert.equal(await status('/livez'), 500)
    assert.equal(await status('/livez/poststarthook/scheduling/bootstrap-system-priority-classes'), 500)
    await server.shutdown()
  })
})
