/**
 * Server-side apply through the client libraries against the daemon:
 * @kubernetes/client-node's patch with the apply content type, and the
 * Python client (Debian's python3-kubernetes). The same steps for both: an
 * apply that creates a pod, a change, another manager's conflicting apply
 * (409) and its forced one; the entries after each compared with upstream's.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node'
import { Daemon } from './daemon.js'
import type { Entry } from './managed-fields.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const pod = (name: string, image: string): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'app', image }] },
})

/** The entry an applier of `pod()` gets: the label, and the container with whichever of its fields it still owns. */
function applier(manager: string, containerFields: string[]): Omit<Entry, 'time'> {
  return {
    manager,
    operation: 'Apply',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"app"}': Object.fromEntries(['.', ...containerFields.map((f) => `f:${f}`)].map((f) => [f, {}])) } },
    },
  }
}

const withoutTime = (entries: unknown): unknown => (entries as Entry[]).map(({ time, ...rest }) => (assert.ok(time, `${rest.manager} has a time`), rest))

const conflictMessage = (manager: string) => `Apply failed with 1 conflict: conflict with "${manager}": .spec.containers[name="app"].image`

describe('server-side apply through @kubernetes/client-node', () => {
  it('creates, changes, conflicts with 409 and forces, with upstream\'s entries after each step', async () => {
    const kc = new KubeConfig()
    kc.loadFromFile(d.kubeconfig)
    const core = kc.makeApiClient(CoreV1Api)
    const apply = (body: V1Pod, fieldManager: string, force?: boolean) =>
      core.patchNamespacedPod({ name: 'node', namespace: 'default', body, fieldManager, ...(force ? { force } : {}) }, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply))

    const created = await apply(pod('node', 'nginx:1.27'), 'client-node')
    assert.deepEqual(withoutTime(created.metadata?.managedFields), [applier('client-node', ['image', 'name'])])
    // What admission set is there, and nobody's.
    assert.equal(created.spec?.serviceAccountName, 'default')
    assert.equal(created.spec?.tolerations?.length, 2)

    const changed = await apply(pod('node', 'nginx:1.28'), 'client-node')
    assert.equal(changed.spec?.containers[0]?.image, 'nginx:1.28')
    assert.deepEqual(withoutTime(changed.metadata?.managedFields), [applier('client-node', ['image', 'name'])])

    await assert.rejects(apply(pod('node', 'nginx:1.29'), 'other'), (err: { code?: number; body?: string }) => {
      assert.equal(err.code, 409)
      const status = JSON.parse(err.body ?? '{}')
      assert.equal(status.message, conflictMessage('client-node'))
      assert.deepEqual(status.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "client-node"', field: '.spec.containers[name="app"].image' }])
      return true
    })
    assert.equal((await core.readNamespacedPod({ name: 'node', namespace: 'default' })).spec?.containers[0]?.image, 'nginx:1.28')

    const forced = await apply(pod('node', 'nginx:1.29'), 'other', true)
    assert.equal(forced.spec?.containers[0]?.image, 'nginx:1.29')
    // The applier that lost a field keeps its earlier time (or, within the same second, its name sorts first).
    assert.deepEqual(withoutTime(forced.metadata?.managedFields), [applier('client-node', ['name']), applier('other', ['image', 'name'])])
  })
})

/** The first Python that has the kubernetes package: `python3` on PATH, else Debian's. */
function pythonWithKubernetes(): string {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    try {
      execFileSync(candidate, ['-c', 'import kubernetes'], { stdio: 'ignore' })
      return candidate
    } catch {
      // not this one
    }
  }
  throw new Error('no python3 with the kubernetes package: install python3-kubernetes')
}

describe('server-side apply through the Python client', () => {
  it('creates, changes, conflicts with 409 and forces, with upstream\'s entries after each step', async () => {
    const python = pythonWithKubernetes()
    const script = join(import.meta.dirname, 'python-ssa.py')
    const out = await new Promise<string>((resolve, reject) =>
      execFile(python, [script, d.kubeconfig], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    )
    const [created, changed, refused, forced] = out.trim().split('\n').map((line) => JSON.parse(line))
    assert.equal(created.status, 201)
    assert.deepEqual(withoutTime(created.managedFields), [applier('python', ['image', 'name'])])
    assert.equal(created.spec.serviceAccountName, 'default')
    assert.equal(changed.status, 200)
    assert.deepEqual(withoutTime(changed.managedFields), [applier('python', ['image', 'name'])])
    assert.equal(refused.status, 409)
    assert.equal(refused.body.message, conflictMessage('python'))
    assert.equal(forced.status, 200)
    // The applier that lost a field keeps its earlier time (or, within the same second, its name sorts first).
    assert.deepEqual(withoutTime(forced.managedFields), [applier('python', ['name']), applier('python-other', ['image', 'name'])])
  })
})
