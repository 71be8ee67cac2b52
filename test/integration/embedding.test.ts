/**
 * Embedding in tests (docs/embedding.md): objects seeded at creation, CRDs among them;
 * reset() back to them and snapshot()/restore(), with watches ended rather
 * than left believing in objects that are gone; a manual clock that expires
 * a token without waiting.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, manualClock } from '../../core/index.js'
import { singleStorage } from '../../core/storage/factory.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { TestClient } from './harness.js'
import { builtModule } from '../helpers/built-module.js'

const CRD_YAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
`

// The custom resource and the namespace come before what they need: the server orders the creations.
const SEED = [
  `apiVersion: example.com/v1
kind: Widget
metadata: { name: first, namespace: team-a }
spec: { size: 3 }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: team-a }
data: { mode: seeded }`,
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
  CRD_YAML,
  JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-json', namespace: 'default' } }] }),
]

const SETTINGS = '/api/v1/namespaces/team-a/configmaps/settings'
const CONFIGMAPS = '/api/v1/namespaces/team-a/configmaps'
const WIDGETS = '/apis/example.com/v1/namespaces/team-a/widgets'

/** Reads a watch until its stream ends; the events it carried. */
async function untilEnd(res: Response): Promise<{ type: string; object: any }[]> {
  const text = await res.text()
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line))
}

/** The first event of a watch; the stream is then let go. */
async function firstEvent(res: Response): Promise<{ type: string; object: any }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  try {
    while (!text.includes('\n')) {
      const { done, value } = await reader.read()
      if (done) break
      text += value
    }
  } finally {
    await reader.cancel()
  }
  assert.ok(text.includes('\n'), `the watch ended without an event: ${text}`)
  return JSON.parse(text.slice(0, text.indexOf('\n')))
}

describe('embedding: seeded objects, reset, snapshot and restore', () => {
  let server: ApiServer
  let api: TestClient
  before(async () => {
    server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, objects: SEED })
    await server.ready
    api = new TestClient(server)
  })
  after(() => server.shutdown())

  it('has every seeded object, the custom resource included, when ready resolves', async () => {
    assert.equal((await api.get('/api/v1/namespaces/team-a')).status, 200)
    const settings = await api.get(SETTINGS)
    assert.equal(settings.status, 200, settings.text)
    assert.deepEqual(settings.body.data, { mode: 'seeded' })
    const widget = await api.get(`${WIDGETS}/first`)
    assert.equal(widget.status, 200, widget.text)
    assert.equal(widget.body.spec.size, 3)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/from-json')).status, 200)
  })

  it('reset() brings back the seeded state and ends the watches open across it', async () => {
    const list = await api.get(CONFIGMAPS)
    const watch = await server.fetch(new Request(`http://in-process${CONFIGMAPS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`))
    assert.equal(watch.status, 200)
    const ended = untilEnd(watch)
    assert.equal((await api.post(CONFIGMAPS, { metadata: { name: 'added-by-test' } })).status, 201)
    assert.equal((await api.put(SETTINGS, { ...(await api.get(SETTINGS)).body, data: { mode: 'changed' } })).status, 200)
    assert.equal((await api.delete(`${WIDGETS}/first`)).status, 200)
    await server.reset()
    // The watch saw the test's own writes, then ended instead of going quiet over the restored state.
    const events = await ended
    assert.ok(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'added-by-test'))
    assert.ok(events.every((e) => e.type !== 'ADDED' || e.object.metadata.name !== 'settings'))
    assert.equal((await api.get(`${CONFIGMAPS}/added-by-test`)).status, 404)
    assert.deepEqual((await api.get(SETTINGS)).body.data, { mode: 'seeded' })
    assert.equal((await api.get(`${WIDGETS}/first`)).status, 200)
    // A watch from a resourceVersion before the reset is refused as too old, as after a compaction.
    const stale = await server.fetch(new Request(`http://in-process${CONFIGMAPS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`))
    const [gone] = await untilEnd(stale)
    assert.equal(gone?.type, 'ERROR')
    assert.equal(gone?.object.code, 410)
    // Writes go on with resourceVersions that never went backwards.
    const next = await api.post(CONFIGMAPS, { metadata: { name: 'after-reset' } })
    assert.equal(next.status, 201)
    assert.ok(Number(next.body.metadata.resourceVersion) > Number(list.body.metadata.resourceVersion))
  })

  it('reset() leaves open the watches of what the test did not write, and the caches hold the seeded state at once', async () => {
    const secrets = await api.get('/api/v1/namespaces/team-a/secrets')
    const watch = await server.fetch(new Request(`http://in-process/api/v1/namespaces/team-a/secrets?watch=1&resourceVersion=${secrets.body.metadata.resourceVersion}`))
    assert.equal(watch.status, 200)
    assert.equal((await api.post(CONFIGMAPS, { metadata: { name: 'written-by-test' } })).status, 201)
    await server.reset()
    // resourceVersion=0 reads come from the watch cache, which must have dropped the test's write by now.
    const names = (await api.get(`${CONFIGMAPS}?resourceVersion=0`)).body.items.map((o: { metadata: { name: string } }) => o.metadata.name)
    assert.ok(names.includes('settings') && !names.includes('written-by-test'), names.join())
    // The secrets watch saw no change and goes on: its next event is the next secret.
    assert.equal((await api.post('/api/v1/namespaces/team-a/secrets', { metadata: { name: 'after-reset' } })).status, 201)
    const first = await firstEvent(watch)
    assert.equal(`${first.type} ${first.object.metadata.name}`, 'ADDED after-reset')
  })

  it('restore() returns to a snapshot, custom resource definitions included', async () => {
    await server.reset()
    const gadgets = parse(CRD_YAML)
    gadgets.metadata.name = 'gadgets.example.com'
    gadgets.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' }
    assert.equal((await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gadgets)).status, 201)
    const saved = await server.snapshot()
    assert.equal((await api.post(CONFIGMAPS, { metadata: { name: 'in-snapshot' } })).status, 201)
    await server.reset()
    assert.equal((await api.get(`${CONFIGMAPS}/in-snapshot`)).status, 404)
    assert.equal((await api.get('/apis/example.com/v1/namespaces/team-a/gadgets')).status, 404, 'gadgets are not served after reset')
    await server.restore(saved)
    assert.equal((await api.get(`${CONFIGMAPS}/in-snapshot`)).status, 404, 'created after the snapshot')
    assert.equal((await api.get('/apis/example.com/v1/namespaces/team-a/gadgets')).status, 200)
  })

  it('restore() serves a definition as the snapshot holds it, after an update of it', async () => {
    await server.reset()
    const gizmos = parse(CRD_YAML)
    gizmos.metadata.name = 'gizmos.example.com'
    gizmos.spec.names = { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' }
    const url = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com'
    assert.equal((await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gizmos)).status, 201)
    const saved = await server.snapshot()
    // The same definitions, one of them changed: a second served version.
    const stored = (await api.get(url)).body
    stored.spec.versions = [...stored.spec.versions, { ...stored.spec.versions[0], name: 'v2', storage: false }]
    assert.equal((await api.put(url, stored)).status, 200)
    await server.restore(saved)
    const discovered = async (version: string) => (await api.get(`/apis/example.com/${version}`)).body?.resources?.some((r: { name: string }) => r.name === 'gizmos') ?? false
    assert.equal(await discovered('v2'), false, 'v2 is not served after the restore')
    assert.equal(await discovered('v1'), true)
    // A reset that leaves the definitions as they were serves the seeded one at once.
    await server.reset()
    assert.equal((await api.get('/apis/example.com/v1/namespaces/team-a/widgets')).status, 200)
    assert.equal((await api.get('/apis/example.com/v1/namespaces/team-a/gizmos')).status, 404)
  })

  it('refuses snapshots on a storage it was given', async () => {
    const other = createApiServer({}, { storageFactory: singleStorage(new MemoryStorage()) })
    try {
      await assert.rejects(other.reset(), /in-memory store/)
      await assert.rejects(other.snapshot(), /in-memory store/)
    } finally {
      await other.shutdown()
    }
  })
})

describe('embedding: seeding that cannot succeed', () => {
  it('fails createApiServer on malformed seed text', () => {
    assert.throws(() => createApiServer({ objects: 'kind: [' }), /options\.objects/)
    assert.throws(() => createApiServer({ objects: [{ metadata: { name: 'x' } }] }), /apiVersion and kind/)
  })

  it('fails ready, naming the object, when the API refuses one', async () => {
    const server = createApiServer({ objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_A_Name' } }] })
    try {
      await assert.rejects(server.ready, /cannot seed ConfigMap Not_A_Name \(v1\): 422/)
    } finally {
      await server.shutdown()
    }
  })
})

describe('embedding: a clock the test moves', () => {
  it('expires a service account token once the clock passes its expiry, with no waiting', async () => {
    const clock = manualClock()
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY }, { now: clock.now })
    const api = new TestClient(server)
    try {
      await server.ready
      const issued = await api.post('/api/v1/namespaces/default/serviceaccounts/default/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      })
      assert.equal(issued.status, 201, issued.text)
      const asBearer = { connection: {}, headers: { authorization: `Bearer ${issued.body.status.token}` } }
      assert.equal((await api.get('/api/v1/namespaces/default/configmaps', asBearer)).status, 200)
      // Its 10 minutes, plus the minute of leeway upstream allows for clock skew.
      clock.advance(11 * 60 * 1000 + 1)
      const refused = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'by-expired' } }, asBearer)
      assert.equal(refused.status, 401)
      assert.equal((await api.get('/api/v1/namespaces/default/configmaps/by-expired')).status, 404)
    } finally {
      await server.shutdown()
    }
  })
})

describe('embedding: a server shut down', () => {
  it('leaves nothing that keeps its process running, so a test file’s process ends when its tests do', async () => {
    // In a process of its own: what keeps a process alive is the whole process's, not this runner's.
    // Its standard streams (pipes to this process) and a file being closed are the process's own, not the server's.
    const script = `
const STDIO_AND_FILES = ['PipeWrap', 'TTYWrap', 'CloseReq', 'FSReqCallback']
import { ADMIN_IDENTITY, createApiServer } from ${JSON.stringify(builtModule('core/index.ts'))}
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
await (await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))).arrayBuffer()
await server.shutdown()
await new Promise((resolve) => setImmediate(resolve))
console.log(JSON.stringify(process.getActiveResourcesInfo().filter((kind) => !STDIO_AND_FILES.includes(kind))))
`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 })
    assert.deepEqual(JSON.parse(stdout), [])
  })

  it('holds no process open while it runs: one with API aggregation, never shut down, lets its process end', async () => {
    // The aggregator polls its APIServices' availability in the background; an interval that held the process
    // kept a test file's process running after its tests (killed here after 60 s, failing the test).
    const script = `
import { ADMIN_IDENTITY, createApiServer } from ${JSON.stringify(builtModule('core/index.ts'))}
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, aggregation: {} })
await server.ready
console.log((await server.fetch(new Request('http://in-process/apis/apiregistration.k8s.io/v1/apiservices'))).status)
`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 })
    assert.equal(stdout.trim(), '200')
  })
})
