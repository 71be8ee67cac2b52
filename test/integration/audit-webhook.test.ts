/**
 * The audit webhook backend against a real HTTPS receiver on loopback, set
 * up from the daemon's own flags and a kubeconfig as an operator writes
 * them: EventLists with upstream's fields, batches, a receiver that fails
 * and comes back, a receiver that hangs (the buffer stays bounded and the
 * drops are counted), and blocking-strict refusing a request it could not
 * record.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { afterEach, describe, it } from 'node:test'
import type { AuditPolicy } from '../../core/audit/types.js'
import { loadKubeconfigConnection } from '../../core/config/kubeconfig.js'
import { type ApiServerOptions, createApiServer } from '../../core/index.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { parseCommandLine } from '../../core/options/flags/index.js'
import { silentLogger } from '../../core/logging/logger.js'
import { auditOptions } from '../../runtimes/node/daemon/audit.js'
import { type AuditReceiver, startAuditReceiver } from './audit-receiver.js'
import { TestClient } from './harness.js'

const POLICY: AuditPolicy = {
  omitStages: ['RequestReceived'],
  rules: [
    { level: 'Metadata', resources: [{ group: '', resources: ['secrets'] }] },
    { level: 'RequestResponse', resources: [{ group: '', resources: ['configmaps'] }] },
    { level: 'Metadata' },
  ],
}

const open: AuditReceiver[] = []
afterEach(async () => {
  for (const r of open.splice(0)) await r.stop()
})

async function setUp(flags: string[], policy: AuditPolicy = POLICY, options: Partial<ApiServerOptions> = {}) {
  const receiver = await startAuditReceiver()
  open.push(receiver)
  const kubeconfig = receiver.kubeconfigFile()
  const command = parseCommandLine([`--audit-webhook-config-file=${kubeconfig}`, ...flags])
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  const connection = loadKubeconfigConnection(readFileSync(kubeconfig, 'utf8'), kubeconfig)
  const audit = auditOptions(command.flags, policy, connection, silentLogger)
  assert.ok(audit)
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, audit, ...options })
  await server.ready
  return { api: new TestClient(server), receiver }
}

/** Waits for a condition that the backend reaches in its own time (no timing is judged: only the outcome). */
async function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail(`never happened: ${what}`)
}

async function metric(api: TestClient, sample: string): Promise<number> {
  const text = (await api.get('/metrics')).text
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `))
  return line ? Number(line.slice(sample.length + 1)) : 0
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } })

describe('the audit webhook backend', () => {
  it('posts an audit.k8s.io/v1 EventList with the request\'s event over HTTPS with the client certificate (blocking)', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-mode=blocking'])
    const r = await api.post('/api/v1/namespaces/default/configmaps', configMap('hooked'))
    assert.equal(r.status, 201)
    // Blocking: the answer came after the receiver took the event.
    const list = receiver.received.find((l) => l.body.items.some((e) => e['auditID'] === r.headers.get('audit-id')))
    assert.ok(list, JSON.stringify(receiver.received))
    assert.equal(list.clientCommonName, 'kube-apiserver-audit')
    assert.match(list.contentType, /^application\/json/)
    assert.equal(list.body.kind, 'EventList')
    assert.equal(list.body.apiVersion, 'audit.k8s.io/v1')
    const ev = list.body.items[0]!
    assert.equal(ev['kind'], 'Event')
    assert.equal(ev['apiVersion'], 'audit.k8s.io/v1')
    assert.equal(ev['level'], 'RequestResponse')
    assert.equal(ev['stage'], 'ResponseComplete')
    assert.equal(ev['verb'], 'create')
    assert.equal(ev['requestURI'], '/api/v1/namespaces/default/configmaps')
    assert.deepEqual(ev['objectRef'], { resource: 'configmaps', namespace: 'default', name: 'hooked', apiVersion: 'v1' })
    assert.equal(ev['responseStatus'].code, 201)
    assert.equal(ev['requestObject'].data.k, 'v')
    assert.equal(ev['responseObject'].metadata.name, 'hooked')
    assert.equal(ev['annotations']['authorization.k8s.io/decision'], 'allow')
  })

  it('never sends a secret\'s data at Metadata level', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-mode=blocking'])
    const r = await api.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'hunter2' } })
    assert.equal(r.status, 201)
    const ev = receiver.events().find((e) => e['auditID'] === r.headers.get('audit-id'))
    assert.equal(ev?.['level'], 'Metadata')
    assert.doesNotMatch(JSON.stringify(receiver.received), /hunter2|aHVudGVyMg/)
  })

  it('records as sourceIPs only the forwarded addresses that are IP addresses, each written as Go writes it', async () => {
    // A request that comes over a connection authenticates as any client's does: with a token here.
    const tokens = [{ token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } }]
    const { api, receiver } = await setUp(['--audit-webhook-mode=blocking'], POLICY, { authentication: { tokens } })
    const sourceIPs = async (headers: Record<string, string>, remoteAddress: string) => {
      const r = await api.get('/api/v1/namespaces/default/configmaps', { connection: { remoteAddress }, headers: { authorization: 'Bearer admin-token', ...headers } })
      assert.equal(r.status, 200, r.text)
      const ev = receiver.events().find((e) => e['auditID'] === r.headers.get('audit-id'))
      assert.ok(ev, 'no event for the request')
      return ev['sourceIPs']
    }
    assert.deepEqual(
      await sourceIPs(
        { 'x-forwarded-for': '999.1.1.1, abc, 198.51.100.1,, 2001:DB8:0:0::0001, fe80::1%eth0, 010.1.1.1', 'x-real-ip': '::ffff:198.51.100.1' },
        '::ffff:192.0.2.7',
      ),
      ['198.51.100.1', '2001:db8::1', '192.0.2.7'],
    )
    assert.deepEqual(await sourceIPs({ 'x-forwarded-for': '999.1.1.1', 'x-real-ip': 'abc' }, '127.0.0.1'), ['127.0.0.1'])
    assert.deepEqual(await sourceIPs({ 'x-real-ip': '203.0.113.9' }, '::1'), ['203.0.113.9', '::1'])
  })

  it('sends batches of at most --audit-webhook-batch-max-size events (batch mode, the default)', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-batch-max-size=2', '--audit-webhook-batch-max-wait=20ms'])
    const ids: string[] = []
    for (const name of ['b1', 'b2', 'b3', 'b4', 'b5']) {
      const r = await api.post('/api/v1/namespaces/default/configmaps', configMap(name))
      assert.equal(r.status, 201)
      ids.push(r.headers.get('audit-id')!)
    }
    await eventually('all five events received', () => ids.every((id) => receiver.events().some((e) => e['auditID'] === id)))
    assert.ok(receiver.received.every((l) => l.body.items.length <= 2 && l.body.kind === 'EventList'), JSON.stringify(receiver.received.map((l) => l.body.items.length)))
  })

  it('tries again after a failed call and delivers once the receiver is back', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-batch-max-wait=1ms', '--audit-webhook-initial-backoff=100ms'])
    receiver.behaviour = 'fail'
    const r = await api.post('/api/v1/namespaces/default/configmaps', configMap('retried'))
    assert.equal(r.status, 201)
    await eventually('a failed call', () => receiver.failures >= 1)
    receiver.behaviour = 'answer'
    await eventually('the event delivered on a retry', () => receiver.events().some((e) => e['auditID'] === r.headers.get('audit-id')))
  })

  it('keeps memory bounded under a receiver that never answers: the buffer fills, further events are dropped and counted', async () => {
    const { api, receiver } = await setUp([
      '--audit-webhook-batch-buffer-size=5',
      '--audit-webhook-batch-max-size=1',
      '--audit-webhook-batch-max-wait=1ms',
      '--audit-webhook-batch-throttle-enable=false',
      '--audit-webhook-initial-backoff=1ms',
    ])
    receiver.behaviour = 'hang'
    for (let i = 0; i < 60; i++) assert.equal((await api.get('/api/v1/namespaces/default/configmaps')).status, 200)
    // The requests were answered at once; what the receiver holds is bounded by the batches in flight.
    await eventually('calls held by the receiver', () => receiver.hanging >= 1)
    assert.ok(receiver.hanging <= 16, `${receiver.hanging} calls in flight`)
    const dropped = await metric(api, 'apiserver_audit_error_total{plugin="buffered"}')
    // 60 list events (and the /metrics GETs' own) went in; at most 16 in flight and 5 buffered were kept.
    assert.ok(dropped >= 60 - 16 - 5, `dropped ${dropped}`)
    assert.ok((await metric(api, 'apiserver_audit_event_total')) >= 60)
  })

  it('cuts each event to size as it is recorded, before it waits in the batch buffer, and still splits the batches sent by size', async () => {
    const { api, receiver } = await setUp([
      '--audit-webhook-truncate-enabled',
      '--audit-webhook-truncate-max-event-size=1200',
      '--audit-webhook-truncate-max-batch-size=1200',
      '--audit-webhook-batch-max-size=3',
      // Nothing leaves the buffer by waiting during the test: only a full batch is sent.
      '--audit-webhook-batch-max-wait=1h',
      '--audit-webhook-batch-throttle-enable=false',
    ])
    const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { k: 'x'.repeat(50_000) } }
    // An event too large even without its objects (its user agent alone is past the limit) is dropped at once.
    const tooLarge = await api.post('/api/v1/namespaces/default/configmaps', { ...big, metadata: { name: 'agent' } }, { headers: { 'user-agent': 'a'.repeat(2000) } })
    assert.equal(tooLarge.status, 201)
    assert.equal(await metric(api, 'apiserver_audit_error_total{plugin="truncate"}'), 1)
    // The /metrics read is the first event in the buffer; two large creates fill the batch of three.
    const created: string[] = []
    for (const name of ['big1', 'big2']) {
      const r = await api.post('/api/v1/namespaces/default/configmaps', { ...big, metadata: { name } })
      assert.equal(r.status, 201)
      created.push(r.headers.get('audit-id')!)
    }
    await eventually('the full batch sent', () => created.every((id) => receiver.events().some((e) => e['auditID'] === id)))
    for (const id of created) {
      const ev = receiver.events().find((e) => e['auditID'] === id)!
      assert.equal(ev['annotations']['audit.k8s.io/truncated'], 'true')
      assert.equal(ev['requestObject'], undefined)
      assert.equal(ev['responseObject'], undefined)
    }
    assert.ok(!receiver.events().some((e) => e['auditID'] === tooLarge.headers.get('audit-id')))
    // Three events of 500 to 800 bytes, at most 1200 bytes a call: the batch left in more than one call.
    assert.ok(receiver.received.length >= 2, JSON.stringify(receiver.received.map((l) => l.body.items.length)))
    assert.ok(receiver.received.every((l) => JSON.stringify(l.body).length <= 1200 + 500))
  })

  it('counts the events of a receiver that stays down once the retries are spent, and still answers (blocking)', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-mode=blocking', '--audit-webhook-initial-backoff=1ms'])
    await receiver.stop()
    const r = await api.post('/api/v1/namespaces/default/configmaps', configMap('unrecorded'))
    assert.equal(r.status, 201)
    assert.equal(await metric(api, 'apiserver_audit_error_total{plugin="webhook"}'), 1)
  })

  it('fails the request with upstream\'s 500 and stores nothing when the receiver is down (blocking-strict)', async () => {
    const { api, receiver } = await setUp(['--audit-webhook-mode=blocking-strict', '--audit-webhook-initial-backoff=1ms'], { rules: [{ level: 'Metadata' }] })
    await receiver.stop()
    const r = await api.post('/api/v1/namespaces/default/configmaps', configMap('strict'))
    assert.equal(r.status, 500)
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/)
    assert.equal(r.text, 'Internal Server Error: "/api/v1/namespaces/default/configmaps": failed to store audit event\n')
    assert.ok(r.headers.get('audit-id'))
    await receiver.start()
    assert.equal(await metric(api, 'apiserver_audit_requests_rejected_total'), 1)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/strict')).status, 404)
  })
})
