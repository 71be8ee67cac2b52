import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { BatchingBackend } from '../../../core/audit/batch.js'
import { TRUNCATED_ANNOTATION, TruncatingBackend } from '../../../core/audit/truncate.js'
import type { AuditBackend, AuditEvent } from '../../../core/audit/types.js'
import { AuditWebhookBackend, eventList, eventListBytes } from '../../../core/audit/webhook.js'
import { AuditLogBackend } from '../../../runtimes/node/daemon/audit-log.js'

const event = (id: string, requestObject?: unknown): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Request',
  auditID: id,
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces',
  verb: 'list',
  user: { username: 'alice', groups: [] },
  requestReceivedTimestamp: '2026-11-23T10:00:00.000000Z',
  stageTimestamp: '2026-11-23T10:00:00.000000Z',
  ...(requestObject !== undefined ? { requestObject } : {}),
})

/** A backend that never answers: the receiver that hangs. */
class Hanging implements AuditBackend {
  readonly name = 'hanging'
  calls = 0
  processEvents(): Promise<void> {
    this.calls++
    return new Promise(() => {})
  }
}

describe('audit backends', () => {
  it('batch mode holds at most its buffer and drops and reports the rest, whatever the backend does', async () => {
    const dropped: string[] = []
    const batching = new BatchingBackend(new Hanging(), { bufferSize: 10, maxBatchSize: 1000, maxBatchWaitMs: 60_000 }, (plugin, _reason, events) =>
      dropped.push(...events.map((e) => `${plugin}:${e.auditID}`)),
    )
    for (let i = 0; i < 25; i++) await batching.processEvents([event(String(i))])
    assert.equal(dropped.length, 15)
    assert.ok(dropped.every((d) => d.startsWith('buffered:')))
  })

  it('truncation drops the objects of a large event and marks it, and drops what is still too large', async () => {
    const got: AuditEvent[] = []
    const sink: AuditBackend = { name: 'sink', processEvents: async (evs) => void got.push(...evs) }
    const dropped: string[] = []
    const truncating = new TruncatingBackend(sink, { maxEventSize: 1000, maxBatchSize: 10_000 }, (_p, _r, evs) => dropped.push(...evs.map((e) => e.auditID)))
    await truncating.processEvents([event('big', { data: 'x'.repeat(5000) }), event('small')])
    assert.deepEqual(
      got.map((e) => [e.auditID, e.requestObject === undefined, e.annotations?.[TRUNCATED_ANNOTATION]]),
      [
        ['big', true, 'true'],
        ['small', true, undefined],
      ],
    )
    assert.deepEqual(dropped, [])
  })

  it('the log file holds each event by the time processEvents returns, and a file it cannot write fails the call', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-log-'))
    try {
      const path = join(dir, 'audit.log')
      const log = new AuditLogBackend({ path, format: 'json', maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0, compress: false, strict: true })
      // Blocking mode answers a request once its events are written: nothing is left for later.
      const first = log.processEvents([event('a')])
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).auditID, 'a')
      await first
      const both = log.processEvents([event('b'), event('c')])
      assert.deepEqual(readFileSync(path, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as AuditEvent).auditID), ['a', 'b', 'c'])
      await both
      await log.shutdown()

      // A log path below a regular file: the call is refused (a promise rejected, not a throw), so that
      // blocking-strict fails the request.
      await writeFile(join(dir, 'plain'), 'not a directory')
      const broken = new AuditLogBackend({ path: join(dir, 'plain', 'audit.log'), format: 'json', maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0, compress: false, strict: true })
      await assert.rejects(broken.processEvents([event('d')]), /ENOTDIR|EEXIST/)
      await broken.shutdown()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('the log file rotates by size and keeps only maxBackups old files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-log-'))
    try {
      const log = new AuditLogBackend({ path: join(dir, 'audit.log'), format: 'json', maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, compress: false, strict: false })
      const padding = 'x'.repeat(200 * 1024)
      for (let i = 0; i < 16; i++) {
        await log.processEvents([event(String(i), { padding })])
        // Backups are named by the time: keep them apart.
        await new Promise((r) => setTimeout(r, 2))
      }
      await log.shutdown()
      const files = (await readdir(dir)).sort()
      assert.ok(files.includes('audit.log'))
      assert.equal(files.filter((f) => f.startsWith('audit-')).length, 2, files.join(' '))
      const current = (await readFile(join(dir, 'audit.log'), 'utf8')).split('\n').filter(Boolean)
      assert.equal(JSON.parse(current.at(-1)!).auditID, '15')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('with compression on, a rotated backup is kept gzipped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audit-log-'))
    try {
      const log = new AuditLogBackend({ path: join(dir, 'audit.log'), format: 'json', maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, compress: true, strict: false })
      const padding = 'x'.repeat(200 * 1024)
      for (let i = 0; i < 8; i++) await log.processEvents([event(String(i), { padding })])
      await log.shutdown()
      const gzipped = (await readdir(dir)).filter((f) => f.endsWith('.gz'))
      assert.equal(gzipped.length, 1, gzipped.join(' '))
      const lines = gunzipSync(await readFile(join(dir, gzipped[0]!))).toString('utf8').split('\n').filter(Boolean)
      assert.equal(JSON.parse(lines[0]!).auditID, '0')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('the webhook backend tries five times, waiting the initial backoff and half as long again each time, then gives up with the last error', async () => {
    const waits: number[] = []
    let calls = 0
    const webhook = new AuditWebhookBackend(
      { send: async () => { calls++; throw new Error(`refused ${calls}`) } },
      { initialBackoffMs: 10_000, strict: true, sleep: async (ms) => void waits.push(ms), random: () => 0 },
    )
    await assert.rejects(webhook.processEvents([event('a')]), /refused 5/)
    assert.equal(calls, 5)
    assert.deepEqual(waits, [10_000, 15_000, 22_500, 33_750])
    assert.equal(webhook.failRequestOnError, true)
  })

  it('the webhook backend sends one EventList per call and stops trying once a call succeeds', async () => {
    const bodies: string[] = []
    let calls = 0
    const webhook = new AuditWebhookBackend(
      { send: async (body) => { if (++calls === 1) throw new Error('once'); bodies.push(new TextDecoder().decode(body)) } },
      { initialBackoffMs: 1, strict: false, sleep: async () => {} },
    )
    await webhook.processEvents([event('a'), event('b')])
    assert.equal(calls, 2)
    const list = JSON.parse(bodies[0]!)
    assert.equal(list.kind, 'EventList')
    assert.equal(list.apiVersion, 'audit.k8s.io/v1')
    assert.deepEqual(list.items.map((e: AuditEvent) => e.auditID), ['a', 'b'])
  })

  it('the webhook backend writes a batch of large events as the same EventList, letting other work run while it does', async () => {
    const events = Array.from({ length: 40 }, (_, i) => event(`e${i}`, { data: Object.fromEntries(Array.from({ length: 5000 }, (_, j) => [`key${j}`, `caf\u00e9 ${j}`])) }))
    let otherWorkRan = false
    setImmediate(() => (otherWorkRan = true))
    const body = await eventListBytes(events)
    assert.ok(otherWorkRan, 'the thread was let go while the batch was written')
    assert.equal(new TextDecoder().decode(body), eventList(events))
  })

  it('batch mode keeps at most maxInFlight batches out with a backend that hangs, and buffers then drops the rest', async () => {
    const hanging = new Hanging()
    const dropped: string[] = []
    const batching = new BatchingBackend(hanging, { bufferSize: 3, maxBatchSize: 1, maxBatchWaitMs: 0, maxInFlight: 2 }, (_p, _r, evs) =>
      dropped.push(...evs.map((e) => e.auditID)),
    )
    for (let i = 0; i < 10; i++) {
      await batching.processEvents([event(String(i))])
      await new Promise((r) => setTimeout(r, 1))
    }
    assert.equal(hanging.calls, 2)
    assert.equal(dropped.length, 10 - 2 - 3)
  })
})
