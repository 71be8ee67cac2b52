/**
 * `--workers=2` writing one audit log that rotates: every worker appends to
 * `--audit-log-path`, and the rotation, with `--audit-log-compress`, must
 * lose no worker's events: a file is compressed only once every worker has
 * moved on to the new one. Many creates, large enough to rotate the log
 * several times, are each found exactly once across the log and its
 * backups once the daemon has stopped.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { Daemon } from './daemon.js'
import { call } from './worker-requests.js'

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
/** Each create's events carry its 16 kB of data twice (request and answer): some 6 MB in all, six rotations at 1 MB. */
const CREATES = 200
const DATA = 'x'.repeat(16 * 1024)
const IN_FLIGHT = 8

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  resources: [{ group: "", resources: [configmaps] }]
- level: None
`

interface AuditLine {
  stage: string
  verb: string
  objectRef?: { resource?: string; name?: string }
  responseStatus?: { code?: number }
}

/** Every event line of the log and its backups, gzipped or not. */
function auditLines(dir: string): { lines: AuditLine[]; files: { name: string; bytes: number }[] } {
  const files = readdirSync(dir).filter((name) => name.startsWith('audit'))
  const lines = files.flatMap((name) => {
    const raw = readFileSync(join(dir, name))
    const text = name.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8')
    return text
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as AuditLine)
  })
  return { lines, files: files.map((name) => ({ name, bytes: statSync(join(dir, name)).size })) }
}

describe('--workers=2 rotating one compressed audit log', () => {
  let daemon: Daemon
  let logDir: string

  before(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'apiserver-audit-'))
    writeFileSync(join(logDir, 'policy.yaml'), POLICY)
    daemon = await Daemon.start([
      '--workers=2',
      `--audit-policy-file=${join(logDir, 'policy.yaml')}`,
      `--audit-log-path=${join(logDir, 'logs', 'audit.log')}`,
      '--audit-log-maxsize=1',
      '--audit-log-compress',
    ])
  })
  after(async () => {
    await daemon?.stop()
    rmSync(logDir, { recursive: true, force: true })
  })

  it("keeps every worker's events across the rotations, each once", async () => {
    let next = 0
    const writer = async (): Promise<void> => {
      while (next < CREATES) {
        const name = `audited-${next++}`
        const created = await call(daemon, 'POST', CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { blob: DATA } })
        assert.equal(created.status, 201, created.body)
      }
    }
    await Promise.all(Array.from({ length: IN_FLIGHT }, writer))
    assert.equal(await daemon.terminate(), 0)

    const { lines, files } = auditLines(join(logDir, 'logs'))
    const backups = files.filter((f) => f.name.endsWith('.gz'))
    assert.ok(backups.length >= 3, `the log rotated: ${JSON.stringify(files)}`)
    assert.deepEqual(
      files.filter((f) => !f.name.endsWith('.gz') && f.name !== 'audit.log'),
      [],
      'every rotated file is compressed once the workers have left it',
    )
    const created = lines.filter((l) => l.stage === 'ResponseComplete' && l.verb === 'create' && l.objectRef?.resource === 'configmaps').map((l) => l.objectRef?.name)
    const missing = Array.from({ length: CREATES }, (_, i) => `audited-${i}`).filter((name) => !created.includes(name))
    assert.deepEqual(missing, [], 'no create is missing from the audit log')
    assert.equal(created.length, CREATES, 'no create is logged twice')
  })
})
