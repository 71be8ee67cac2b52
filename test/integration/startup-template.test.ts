/**
 * Start-up templates (core/embedding/startup-template.ts): a server started
 * with the options of an earlier one in the same process begins from what
 * that one's start-up stored. Each server still has its own store: writes
 * in one never reach another. The seeded objects and custom resources are
 * there and served; each server runs its own controllers; options that
 * differ, the embedder's clock and `reuseStartup: false` get a start-up of
 * their own.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ADMIN_IDENTITY, type ApiServer, type ApiServerOptions, createApiServer, manualClock } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { TestClient } from './harness.js'
import { builtModule } from '../helpers/built-module.js'

const servers: ApiServer[] = []
after(() => Promise.all(servers.map((s) => s.shutdown())))

async function started(options: ApiServerOptions = {}, ports: Parameters<typeof createApiServer>[1] = {}): Promise<TestClient> {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...options }, ports)
  servers.push(server)
  await server.ready
  return new TestClient(server)
}

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.template.example.com' },
  spec: {
    group: 'template.example.com',
    scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
  },
}
const SEED = [
  CRD,
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'seeded' } },
  { apiVersion: 'template.example.com/v1', kind: 'Gizmo', metadata: { name: 'first', namespace: 'seeded' }, spec: { size: 1 } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'seeded' }, data: { mode: 'seeded' } },
]
/** Options no other test file uses, so that the first server here is the one that leaves the template. */
const seeded = (): ApiServerOptions => ({ objects: SEED, serviceClusterIPRange: ['10.211.0.0/16'], securePort: 6443 })

const uidOf = async (api: TestClient, path: string): Promise<string> => ((await api.get(path)).body as KubeObject).metadata.uid!

describe('start-up templates', () => {
  it('begins a second server alike from the first one’s start-up: same seeded objects, served custom resources, a store of its own', async () => {
    const first = await started(seeded())
    const second = await started(seeded())
    // What start-up made is the template's: the same objects, uids included.
    assert.equal(await uidOf(second, '/api/v1/namespaces/kube-system'), await uidOf(first, '/api/v1/namespaces/kube-system'))
    assert.deepEqual((await second.get('/api/v1/namespaces/seeded/configmaps/settings')).body.data, { mode: 'seeded' })
    const gizmo = await second.get('/apis/template.example.com/v1/namespaces/seeded/gizmos/first')
    assert.equal(gizmo.status, 200, gizmo.text)
    const kubernetes = await second.get('/api/v1/namespaces/default/services/kubernetes')
    assert.equal(kubernetes.body.spec.clusterIP, '10.211.0.1')

    // Writes stay in their server.
    assert.equal((await second.post('/apis/template.example.com/v1/namespaces/seeded/gizmos', { apiVersion: 'template.example.com/v1', kind: 'Gizmo', metadata: { name: 'second-only' }, spec: { size: 2 } })).status, 201)
    assert.equal((await first.get('/apis/template.example.com/v1/namespaces/seeded/gizmos/second-only')).status, 404)
    assert.equal((await first.delete('/api/v1/namespaces/seeded/configmaps/settings')).status, 200)
    assert.equal((await second.get('/api/v1/namespaces/seeded/configmaps/settings')).status, 200)
    // The allocations were rebuilt from the template's services: a new Service never gets the `kubernetes` Service's address.
    const svc = await second.post('/api/v1/namespaces/default/services', { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } })
    assert.equal(svc.status, 201, svc.text)
    assert.notEqual(svc.body.spec.clusterIP, '10.211.0.1')
  })

  it('runs each server’s own controllers at once: nothing of the first server’s holds them', async () => {
    const options = { ...seeded(), serviceClusterIPRange: ['10.212.0.0/16'] }
    await started(options)
    const second = await started(options)
    assert.equal((await second.post('/api/v1/namespaces', { metadata: { name: 'fresh' } })).status, 201)
    for (let i = 0; i < 200; i++) {
      if ((await second.get('/api/v1/namespaces/fresh/serviceaccounts/default')).status === 200) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.fail('the default service account was never created')
  })

  it('holds the fixed objects of the post-start hooks as the first server’s hooks left them, the hooks’ checks passing', async () => {
    const options = { ...seeded(), serviceClusterIPRange: ['10.215.0.0/16'], authorizationModes: ['RBAC'] }
    const first = await started(options)
    const second = await started(options)
    // Each hook's readiness check passes on the server begun from the template.
    const readyz = await second.get('/readyz?verbose')
    assert.equal(readyz.status, 200, readyz.text)
    for (const hook of ['rbac/bootstrap-roles', 'priority-and-fairness-config-producer', 'scheduling/bootstrap-system-priority-classes']) {
      assert.match(readyz.text, new RegExp(`\\[\\+\\]poststarthook/${hook} ok`))
    }
    // Their objects are the template's, as the first server's hooks left them.
    for (const path of ['/apis/rbac.authorization.k8s.io/v1/clusterroles/admin', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/exempt', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical']) {
      const [mine, theirs] = [(await second.get(path)).body as KubeObject, (await first.get(path)).body as KubeObject]
      assert.deepEqual(mine, theirs, path)
    }
  })

  it('keeps no template of a start whose hooks were refused their writes', async () => {
    // AlwaysDeny refuses the priority classes' and flow schemas' writes: those hooks' checks fail, and keep failing
    // on a second server with the same options (a template of the first would have let it skip them).
    const options: ApiServerOptions = { ...seeded(), objects: [], serviceClusterIPRange: ['10.216.0.0/16'], admission: { plugins: ['AlwaysDeny'] } }
    for (const server of [await started(options), await started(options)]) {
      const readyz = await server.get('/readyz?verbose')
      assert.match(readyz.text, /\[-\]poststarthook\/priority-and-fairness-config-producer failed/, readyz.text)
      assert.match(readyz.text, /\[-\]poststarthook\/scheduling\/bootstrap-system-priority-classes failed/, readyz.text)
    }
  })

  it('starts anew when the options differ, the embedder gives the clock, or reuseStartup is false', async () => {
    const base = { ...seeded(), serviceClusterIPRange: ['10.213.0.0/16'] }
    const reference = await uidOf(await started(base), '/api/v1/namespaces/kube-system')
    assert.equal(await uidOf(await started(base), '/api/v1/namespaces/kube-system'), reference)
    assert.notEqual(await uidOf(await started({ ...base, reuseStartup: false }), '/api/v1/namespaces/kube-system'), reference)
    assert.notEqual(await uidOf(await started(base, { now: manualClock(new Date('2030-01-01T00:00:00Z')).now }), '/api/v1/namespaces/kube-system'), reference)
    const other = await started({ ...base, objects: [...SEED, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra', namespace: 'seeded' } }] })
    assert.notEqual(await uidOf(other, '/api/v1/namespaces/kube-system'), reference)
    assert.equal((await other.get('/api/v1/namespaces/seeded/configmaps/extra')).status, 200)
  })
})


describe('start-up templates kept beyond the process (the startupTemplates port)', () => {
  /**
   * One process: a server with the seeded options and a port over files in `dir` (one per key), its
   * kube-system uid and seeded ConfigMap printed. Each run is a fresh process, as each test file's is.
   */
  const processScript = (dir: string): string => `
import { readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { ADMIN_IDENTITY, createApiServer } from ${JSON.stringify(builtModule('core/index.ts'))}
const fileOf = (key) => ${JSON.stringify(dir)} + '/' + createHash('sha256').update(key).digest('hex') + '.json'
const startupTemplates = {
  read: (key) => { try { return readFileSync(fileOf(key), 'utf8') } catch { return undefined } },
  write: (key, text) => writeFileSync(fileOf(key), text),
}
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, objects: ${JSON.stringify(SEED)}, serviceClusterIPRange: ['10.214.0.0/16'] }, { startupTemplates })
const get = async (path) => (await server.fetch(new Request('http://in-process' + path))).json()
const uid = (await get('/api/v1/namespaces/kube-system')).metadata.uid
const settings = (await get('/api/v1/namespaces/seeded/configmaps/settings')).data
const gizmo = (await get('/apis/template.example.com/v1/namespaces/seeded/gizmos/first')).spec
const exempt = (await get('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/exempt')).spec.matchingPrecedence
await server.shutdown()
console.log(JSON.stringify({ uid, settings, gizmo, exempt }))
`
  type Printed = { uid: string; settings: unknown; gizmo: unknown; exempt: number }
  const runProcess = async (dir: string): Promise<Printed> => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', processScript(dir)], { timeout: 60_000 })
    return JSON.parse(stdout) as Printed
  }

  it('begins a later process’s first server from what the first process’s start-up kept, and starts afresh over a template it cannot read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'startup-templates-'))
    try {
      const first = await runProcess(dir)
      const kept = await readdir(dir)
      assert.equal(kept.length, 1, 'the first process kept no template')
      const second = await runProcess(dir)
      assert.deepEqual(second, first, 'the second process did not begin from the first one’s template')
      assert.deepEqual(second.settings, { mode: 'seeded' })
      assert.deepEqual(second.gizmo, { size: 1 })

      // A file cut short is no template: that process starts up afresh and keeps its own.
      const file = join(dir, kept[0]!)
      await writeFile(file, (await readFile(file, 'utf8')).slice(0, 100))
      const third = await runProcess(dir)
      assert.notEqual(third.uid, first.uid)
      assert.deepEqual(third.settings, { mode: 'seeded' })
      assert.equal((await runProcess(dir)).uid, third.uid)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('takes a template as it is: the post-start hooks that write fixed objects do not run again over it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'startup-templates-'))
    try {
      const first = await runProcess(dir)
      assert.equal(first.exempt, 1)
      // The mandatory 'exempt' flow schema, as a start's hook would never leave it (it puts back precedence 1).
      const file = join(dir, (await readdir(dir))[0]!)
      const text = await readFile(file, 'utf8')
      const edited = text.replace('"matchingPrecedence":1,', '"matchingPrecedence":7,')
      assert.notEqual(edited, text, 'the template holds the flow schema')
      await writeFile(file, edited)
      const second = await runProcess(dir)
      assert.equal(second.uid, first.uid, 'the second process began from the template')
      assert.equal(second.exempt, 7)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
