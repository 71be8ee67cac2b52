/**
 * The built bin started as envtest starts it, twice, each time on an empty
 * etcd: the first start bootstraps the cluster object by object and keeps
 * a template of it beside the bin's script; the second writes that
 * template to its etcd, and serves the same objects, made its own (new
 * uids, its own times, its own port in the `kubernetes` Service).
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, describe, it } from 'node:test'
import { runDaemon } from '../../runtimes/node/daemon/daemon.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { BIN, freePort } from './daemon.js'
import { prepareEnvtest, probe } from './harnesses.js'

const SCRIPT_DIR = dirname(BIN)
const TEMPLATE_LOG = 'the empty store was given the objects an earlier start with these settings wrote at start-up'
const START_WITHIN_MS = 60_000

/** What start-up stores for the cluster, by list path. */
const LISTS = [
  '/api/v1/namespaces',
  '/api/v1/serviceaccounts',
  '/api/v1/services',
  '/apis/scheduling.k8s.io/v1/priorityclasses',
  '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  '/apis/rbac.authorization.k8s.io/v1/roles',
  '/apis/rbac.authorization.k8s.io/v1/rolebindings',
  '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas',
  '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
  '/apis/apiregistration.k8s.io/v1/apiservices',
]

type Obj = { metadata: { name: string; namespace?: string; uid: string; creationTimestamp: string; resourceVersion?: string; managedFields?: { time?: string }[] } } & Record<string, unknown>
type Client = { cert: string; key: string }

function getText(url: string, client: Client): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, ...client }, (res) => {
      let body = ''
      res.on('data', (d) => (body += String(d)))
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode} ${body}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

const getJson = async (url: string, client: Client): Promise<{ items: Obj[] } & Record<string, unknown>> => JSON.parse(await getText(url, client))

interface Cluster {
  etcd: EtcdServer
  /** Whether stopping the server stops its etcd too: each start has an etcd of its own unless given one. */
  ownsEtcd: boolean
  server: ChildProcess
  output: string[]
  port: number
  admin: Client
  startedAt: number
  /** Whether `admin` held its aggregated rules when /healthz first answered 200. */
  aggregatedAtHealthz: boolean
}

async function startEnvtestLike(root: string, extra: string[], shared?: EtcdServer): Promise<Cluster> {
  const etcd = shared ?? (await EtcdServer.start())
  const port = await freePort()
  const setup = await prepareEnvtest(mkdtempSync(join(root, 'k8s_test_framework_')), { address: '127.0.0.1', port, etcdUrl: etcd.clientUrl })
  const startedAt = Date.now()
  const server = spawn(BIN, [...setup.args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  server.stdout!.on('data', (d) => output.push(String(d)))
  server.stderr!.on('data', (d) => output.push(String(d)))
  const deadline = Date.now() + START_WITHIN_MS
  while ((await probe(`https://127.0.0.1:${port}/healthz`)) !== 200) {
    if (server.exitCode !== null || Date.now() > deadline) assert.fail(`no /healthz 200:\n${output.join('')}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  const admin = { cert: setup.admin.certificate, key: setup.admin.privateKey }
  // ClusterRole aggregation's first pass ends the start-up of the server that leads the controllers; another
  // server on the same etcd may answer before the leader has filled admin: compare once it is.
  let aggregatedAtHealthz: boolean | undefined
  for (;;) {
    const aggregated = await getJson(`https://127.0.0.1:${port}/apis/rbac.authorization.k8s.io/v1/clusterroles/admin`, admin)
    const filled = ((aggregated['rules'] as unknown[] | undefined) ?? []).length > 0
    aggregatedAtHealthz ??= filled
    if (filled) break
    if (Date.now() > deadline) assert.fail('admin was never aggregated')
    await new Promise((r) => setTimeout(r, 50))
  }
  // Every namespace's `default` ServiceAccount is the service account controller's to write, which on etcd runs
  // once it holds the controllers' lease: as upstream's controller manager, it may do so after /healthz answers.
  for (;;) {
    const { items: spaces } = await getJson(`https://127.0.0.1:${port}/api/v1/namespaces`, admin)
    const { items: accounts } = await getJson(`https://127.0.0.1:${port}/api/v1/serviceaccounts`, admin)
    const served = new Set(accounts.filter((sa) => sa.metadata.name === 'default').map((sa) => sa.metadata.namespace))
    if (spaces.every((ns) => served.has(ns.metadata.name))) break
    if (Date.now() > deadline) assert.fail(`no default service account in every namespace: ${[...served].join(', ')}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return { etcd, ownsEtcd: !shared, server, output, port, admin, startedAt, aggregatedAtHealthz }
}

const stopped = new WeakSet<Cluster>()

async function stop(cluster: Cluster): Promise<void> {
  if (stopped.has(cluster)) return
  stopped.add(cluster)
  if (cluster.server.exitCode === null) {
    const exited = new Promise((r) => cluster.server.once('exit', r))
    cluster.server.kill('SIGTERM')
    await exited
  }
  if (cluster.ownsEtcd) await cluster.etcd.destroy()
}

/** Every list, each object without what is each cluster's own: uids, times, resourceVersions, the server's port. */
type ManagedEntry = { manager?: string; operation?: string; subresource?: string }
const entryKey = (e: ManagedEntry): string => `${e.manager ?? ''} ${e.operation ?? ''} ${e.subresource ?? ''}`

async function contents(cluster: Cluster, lists = LISTS): Promise<{ objects: Record<string, unknown>; uids: Obj[] }> {
  const objects: Record<string, unknown> = {}
  const all: Obj[] = []
  for (const path of lists) {
    const { items } = await getJson(`https://127.0.0.1:${cluster.port}${path}`, cluster.admin)
    all.push(...items)
    objects[path] = JSON.parse(
      JSON.stringify(items, (key, value: unknown) => {
        if (key === 'uid' || key === 'resourceVersion' || key === 'creationTimestamp' || key === 'time' || key === 'lastTransitionTime') return undefined
        if (key === 'targetPort' && value === cluster.port) return 'the secure port'
        // Entries are ordered by their time's second first: whether two writes of a start fell in one second is timing.
        if (key === 'managedFields' && Array.isArray(value)) return [...(value as ManagedEntry[])].sort((a, b) => entryKey(a).localeCompare(entryKey(b)))
        return value
      }),
    )
  }
  return { objects, uids: all }
}

const templateFiles = (): string[] => readdirSync(SCRIPT_DIR).filter((f) => f.includes('.startup-'))

describe('start-up templates on etcd', () => {
  const root = mkdtempSync(join(tmpdir(), 'apiserver-template-'))
  after(() => rmSync(root, { recursive: true, force: true }))

  it("a start as envtest's on an empty etcd serves what an earlier start with the same settings bootstrapped, as its own", async () => {
    // Settings of this test's alone, so that its first start finds no template and keeps one.
    const settings = [`--event-ttl=${randomInt(10_000, 1_000_000)}m`]
    const before = new Set(templateFiles())
    const first = await startEnvtestLike(root, settings)
    let kept: string | undefined
    try {
      assert.ok(!first.output.join('').includes(TEMPLATE_LOG), 'the first start bootstraps in full')
      assert.ok(first.aggregatedAtHealthz, 'admin is aggregated when /healthz first answers')
      const bootstrapped = await contents(first)
      // Kept a moment after serving, or at the latest when it stops.
      await stop(first)
      kept = templateFiles().find((f) => !before.has(f))
      assert.ok(kept, 'the first start keeps a template beside the script')
      assert.equal(statSync(join(SCRIPT_DIR, kept)).mode & 0o777, 0o600)

      const second = await startEnvtestLike(root, settings)
      try {
        assert.ok(second.output.join('').includes(TEMPLATE_LOG), second.output.join(''))
        assert.ok(second.aggregatedAtHealthz, 'admin is aggregated when /healthz first answers, from the template')
        const fromTemplate = await contents(second)
        assert.deepEqual(fromTemplate.objects, bootstrapped.objects)
        // The hooks that write fixed objects did not run over the template, and report done.
        const readyz = await getText(`https://127.0.0.1:${second.port}/readyz?verbose`, second.admin)
        for (const hook of ['rbac/bootstrap-roles', 'priority-and-fairness-config-producer', 'scheduling/bootstrap-system-priority-classes']) {
          assert.ok(readyz.includes(`[+]poststarthook/${hook} ok`), readyz)
        }
        // The watch caches began from the objects the template wrote (not read back from etcd): each holds what etcd does.
        for (const path of LISTS) {
          const cached = await getJson(`https://127.0.0.1:${second.port}${path}?resourceVersion=0`, second.admin)
          const revision = (cached['metadata'] as { resourceVersion: string }).resourceVersion
          const stored = await getJson(`https://127.0.0.1:${second.port}${path}?resourceVersion=${revision}&resourceVersionMatch=Exact`, second.admin)
          assert.deepEqual(cached.items, stored.items, path)
          // Objects of one resource never share a revision (several kinds' objects are written in one transaction).
          const revisions = cached.items.map((o) => o.metadata.resourceVersion)
          assert.equal(new Set(revisions).size, revisions.length, `${path}: ${revisions.join(', ')}`)
        }
        // Every uid is new, and every object was made at the second start.
        const firstUids = new Set(bootstrapped.uids.map((o) => o.metadata.uid))
        for (const obj of fromTemplate.uids) {
          assert.ok(!firstUids.has(obj.metadata.uid), `${obj.metadata.name} kept the first cluster's uid`)
          assert.ok(Date.parse(obj.metadata.creationTimestamp) >= Math.floor(second.startedAt / 1000) * 1000, `${obj.metadata.name} made ${obj.metadata.creationTimestamp}`)
        }
        const service = await getJson(`https://127.0.0.1:${second.port}/api/v1/namespaces/default/services/kubernetes`, second.admin)
        assert.equal((service['spec'] as { ports: { targetPort: number }[] }).ports[0]!.targetPort, second.port)
      } finally {
        await stop(second)
      }
    } finally {
      await stop(first)
      if (kept) rmSync(join(SCRIPT_DIR, kept), { force: true })
    }
  })

  it('keeps no template of a start whose post-start hooks were refused their writes', async () => {
    // AlwaysDeny refuses the priority classes and flow schemas: a template of that store would let later starts skip
    // their hooks. The daemon in this process, on its embedded store, with the templates port counting what it keeps.
    const keptBy = async (extra: string[]): Promise<number> => {
      let written = 0
      const stop = new AbortController()
      const dir = mkdtempSync(join(root, 'daemon-'))
      const exited = runDaemon(['--cert-dir', join(dir, 'pki'), '--secure-port=0', '--bind-address=127.0.0.1', '--data-dir', join(dir, 'data'), `--event-ttl=${randomInt(10_000, 1_000_000)}m`, ...extra], {
        stop: stop.signal,
        stdout: () => {},
        stderr: () => {},
        logStream: { write: () => {} },
        startupTemplates: { read: () => undefined, write: () => void (written += 1) },
        onListening: () => stop.abort('listening'),
      })
      assert.equal(await exited, 0)
      return written
    }
    assert.equal(await keptBy([]), 1, 'a start whose hooks wrote their objects keeps a template')
    assert.equal(await keptBy(['--enable-admission-plugins=AlwaysDeny']), 0)
  })

  it('two servers started at once on one empty etcd write each object once and serve the same objects', async () => {
    const settings = [`--event-ttl=${randomInt(10_000, 1_000_000)}m`]
    const before = new Set(templateFiles())
    const first = await startEnvtestLike(root, settings)
    let kept: string | undefined
    const etcd = await EtcdServer.start()
    const started: Cluster[] = []
    try {
      // The servers' ports differ, and each sets the kubernetes Service's: that one is left out.
      const lists = LISTS.filter((path) => !path.endsWith('/services'))
      const bootstrapped = await contents(first, lists)
      await stop(first)
      kept = templateFiles().find((f) => !before.has(f))
      assert.ok(kept)
      const both = await Promise.allSettled([startEnvtestLike(root, settings, etcd), startEnvtestLike(root, settings, etcd)])
      for (const r of both) if (r.status === 'fulfilled') started.push(r.value)
      for (const r of both) if (r.status === 'rejected') throw r.reason
      assert.ok(
        started.some((c) => c.output.join('').includes(TEMPLATE_LOG)),
        'one of them at least wrote the template',
      )
      const [a, b] = [await contents(started[0]!, lists), await contents(started[1]!, lists)]
      assert.deepEqual(a.objects, bootstrapped.objects)
      assert.deepEqual(b.objects, bootstrapped.objects)
      // One object each: both servers serve the same uids.
      const uidsOf = (c: { uids: Obj[] }) => c.uids.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name} ${o.metadata.uid}`).sort()
      assert.deepEqual(uidsOf(a), uidsOf(b))
    } finally {
      await stop(first)
      for (const c of started) await stop(c)
      await etcd.destroy()
      if (kept) rmSync(join(SCRIPT_DIR, kept), { force: true })
    }
  })
})
