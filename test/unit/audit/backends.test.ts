import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { BatchingBackend } from '../../../core/audit/batch.js'
import { TRUNCATED_ANNOTATION, TruncatingBackend } from '../../../core/audit/truncate.js'
import type { AuditBackend, AuditEvent } from '../../../core/audit/types.js'
import { AuditLogBackend } from '../../../runtimes/node/audit-log.js'

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
})
