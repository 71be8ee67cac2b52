/**
 * The object an audit event names, read from a real audit log file as an
 * operator reads it (`--audit-log-path`): a create or an update names the
 * object it sent (namespace, name, uid, resourceVersion as the client wrote
 * them), from the events after the handler read the body on, as upstream's
 * LogRequestObject fills objectRef; RequestReceived, written before, names
 * what the URL names. A patch names what the URL names.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type { AuditPolicy } from '../../core/audit/types.js'
import { createApiServer } from '../../core/index.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { parseCommandLine } from '../../core/options/flags/index.js'
import { silentLogger } from '../../core/logging/logger.js'
import { auditOptions } from '../../runtimes/node/daemon/audit.js'
import { eventually, TestClient } from './harness.js'

const POLICY: AuditPolicy = { rules: [{ level: 'Metadata', resources: [{ group: '', resources: ['configmaps'] }] }, { level: 'None' }] }

const dirs: string[] = []
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function setUp() {
  const dir = mkdtempSync(join(tmpdir(), 'audit-ref-'))
  dirs.push(dir)
  const path = join(dir, 'audit.log')
  const command = parseCommandLine([`--audit-log-path=${path}`])
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  const audit = auditOptions(command.flags, POLICY, undefined, silentLogger)
  assert.ok(audit)
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, audit })
  await server.ready
  const api = new TestClient(server)
  /** The events of one request in the log file, once its ResponseComplete is written. */
  const eventsOf = async (auditId: string | null): Promise<Record<string, any>[]> => {
    assert.ok(auditId)
    let events: Record<string, any>[] = []
    await eventually(`the log has the ResponseComplete of ${auditId}`, async () => {
      let text = ''
      try {
        text = readFileSync(path, 'utf8')
      } catch {
        return false
      }
      events = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((e) => e['auditID'] === auditId)
      return events.some((e) => e['stage'] === 'ResponseComplete')
    })
    return events
  }
  return { api, eventsOf }
}

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
const stageRef = (events: Record<string, any>[], stage: string): unknown => events.find((e) => e['stage'] === stage)?.['objectRef']

describe('the object an audit event names', () => {
  it('names a created object in ResponseComplete, and only what the URL names in RequestReceived', async () => {
    const { api, eventsOf } = await setUp()
    const r = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } })
    assert.equal(r.status, 201)
    const events = await eventsOf(r.headers.get('audit-id'))
    assert.deepEqual(stageRef(events, 'RequestReceived'), { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' })
    assert.deepEqual(stageRef(events, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', name: 'cm', apiVersion: 'v1' })
  })

  it('names the object of a create that validation refuses, and nothing is stored', async () => {
    const { api, eventsOf } = await setUp()
    const r = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } })
    assert.equal(r.status, 422)
    const events = await eventsOf(r.headers.get('audit-id'))
    assert.deepEqual(stageRef(events, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', name: 'Bad_Name', apiVersion: 'v1' })
    assert.equal(events.find((e) => e['stage'] === 'ResponseComplete')?.['responseStatus']?.['code'], 422)
    assert.equal((await api.get(`${CONFIGMAPS}/Bad_Name`)).status, 404)
  })

  it('names no object for a generateName create, as upstream: the name is made after the body is logged', async () => {
    const { api, eventsOf } = await setUp()
    const r = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } })
    assert.equal(r.status, 201)
    assert.match(r.body.metadata.name, /^gen-/)
    const events = await eventsOf(r.headers.get('audit-id'))
    assert.deepEqual(stageRef(events, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' })
  })

  it('names the uid and resourceVersion an update sent, and a patch only what its URL names', async () => {
    const { api, eventsOf } = await setUp()
    const created = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'up' }, data: { a: 'b' } })
    const { uid, resourceVersion } = created.body.metadata
    const updated = await api.put(`${CONFIGMAPS}/up`, { ...created.body, data: { a: 'c' } })
    assert.equal(updated.status, 200)
    const events = await eventsOf(updated.headers.get('audit-id'))
    assert.deepEqual(stageRef(events, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', name: 'up', uid, apiVersion: 'v1', resourceVersion })
    const patched = await api.patch(`${CONFIGMAPS}/up`, { data: { a: 'd' } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200)
    const patchEvents = await eventsOf(patched.headers.get('audit-id'))
    assert.deepEqual(stageRef(patchEvents, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', name: 'up', apiVersion: 'v1' })
  })

  it('names the stale resourceVersion of an update that conflicts, and the object keeps its data', async () => {
    const { api, eventsOf } = await setUp()
    const created = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stale' }, data: { a: 'b' } })
    const stale = { ...created.body, metadata: { ...created.body.metadata, resourceVersion: '1' }, data: { a: 'c' } }
    const r = await api.put(`${CONFIGMAPS}/stale`, stale)
    assert.equal(r.status, 409)
    const events = await eventsOf(r.headers.get('audit-id'))
    assert.deepEqual(stageRef(events, 'ResponseComplete'), { resource: 'configmaps', namespace: 'default', name: 'stale', uid: created.body.metadata.uid, apiVersion: 'v1', resourceVersion: '1' })
    assert.deepEqual((await api.get(`${CONFIGMAPS}/stale`)).body.data, { a: 'b' })
  })
})
