/**
 * The daemon suite, in the terms of the performance issue: the built daemon
 * on its embedded store and on etcd, "the limit" (a Node TLS server with a
 * fixed body) and etcd itself, side by side in one run:
 *
 * - wrk GET of one ConfigMap, 2 threads, 32 connections, TLS, bearer token;
 * - a Node client with 64 connections for GETs, LISTs of 1,000, creates and
 *   updates; etcd driven directly with the same transactions as the ceiling;
 * - watch delivery to 100 and to 1,000 watchers of one resource;
 * - resident memory at ready, and with 10,000 ConfigMaps of 1 kB stored and cached.
 *
 *   node --import tsx test/bench/daemon-suite.ts [--seconds S] [--no-write] [--upstream KUBE_APISERVER] [--save-figures FILE | --render-figures FILE]
 *   node --import tsx test/bench/daemon-suite.ts --profile-creates DIR
 *   node --import tsx test/bench/daemon-suite.ts --compare-writes BUILD [--rounds N] [--client-cert] [--backend etcd|embedded]
 *
 * The second form profiles the etcd daemon (`node --cpu-prof`) while it
 * takes creates and updates only; the third runs creates, updates and GETs on etcd
 * (or on the embedded store, `--backend embedded`) with this build and another one (a checkout with its own `npm run build`)
 * in alternating rounds, with the daemon's CPU time per write (as the admin's
 * client certificate with `--client-cert`, else the bearer token). Only the
 * first form writes its section of docs/benchmarks.md.
 * With `--upstream` (or UPSTREAM_KUBE_APISERVER in the environment), upstream's
 * kube-apiserver binary runs as one more target on the same etcd, and the
 * goals are judged against its figures of this run (upstream-target.ts).
 * Figures only: nothing passes or fails.
 */
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { configMapBody } from './configmap-payload.js'
import { cpuMs, type DaemonTarget, rssMiB, startDaemon, startLimitServer, call, fetchText, TOKEN, type TlsTarget } from './tls-targets.js'
import { forgetStartupTemplates } from './daemon.js'
import { combineLoads, type LoadResult, runLoad } from './load.js'
import { combineWrk, ensureWrk, type WrkResult, wrkGet } from './wrk.js'
import { measureWatchDelivery } from './daemon-watch.js'
import { measureEtcdDirect, storedValue } from './etcd-direct.js'
import { type DaemonFigures, emptyFigures, renderDaemonSuite, type SuiteFigures } from './daemon-suite-report.js'
import { replaceSection } from './section.js'
import { daemonMainOf } from './package-entry.js'
import { startUpstream } from './upstream-target.js'

const ROOT = join(import.meta.dirname, '..', '..')
const MAIN = join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')
const CONNECTIONS = 64
/** The uncounted pass before the measured writes and LISTs, per kind of request and target. */
const WARM_UP_SECONDS = 2
const LIST_SIZE = 1000
const BULK = 10_000
const UPDATE_SET = 200
const NS = '/api/v1/namespaces/default/configmaps'
const BULK_NS = '/api/v1/namespaces/bulk/configmaps'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    /** Measured passes of the GETs and writes over the targets, taking turns. */
    passes: { type: 'string', default: '2' },
    'no-write': { type: 'boolean', default: false },
    'profile-creates': { type: 'string' },
    'compare-writes': { type: 'string' },
    backend: { type: 'string', default: 'etcd' },
    rounds: { type: 'string', default: '3' },
    'client-cert': { type: 'boolean', default: false },
    'save-figures': { type: 'string' },
    'render-figures': { type: 'string' },
    upstream: { type: 'string', default: process.env['UPSTREAM_KUBE_APISERVER'] },
  },
})
const seconds = Number(values.seconds)
const passes = Number(values.passes)
const log = (text: string) => void process.stderr.write(`${text}\n`)
if (!existsSync(MAIN)) {
  log(`${MAIN} is missing: run \`npm run build\` first`)
  process.exit(1)
}
if (values.upstream && !existsSync(resolve(values.upstream))) {
  log(`--upstream ${values.upstream}: no such file (docs/benchmarks.md, "How to run", says how to build upstream's kube-apiserver)`)
  process.exit(1)
}

const ok = (expected: number) => async (status: Promise<number>) => (await status) === expected
const timed = (maxSeconds: number) => ({ total: 10_000_000, concurrency: CONNECTIONS, maxSeconds })

/** The namespaces the suite writes to besides `default`. */
async function prepare(t: DaemonTarget): Promise<void> {
  for (const name of ['bulk', 'watch']) {
    const status = await call(t.agent, t.port, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }))
    if (status !== 201) throw new Error(`${t.label}: creating namespace ${name} answered ${status}`)
  }
  const fill = await runLoad({ total: LIST_SIZE, concurrency: 16, maxSeconds: 120 }, (i) => ok(201)(call(t.agent, t.port, 'POST', NS, configMapBody(`cm-${i}`))))
  if (fill.errors || fill.count < LIST_SIZE) throw new Error(`${t.label}: filling ${NS} failed (${fill.errors} errors)`)
}

/** Creates in `bulk` for the measured time, named on from those made before. */
async function creates(t: DaemonTarget, f: DaemonFigures, maxSeconds: number): Promise<LoadResult> {
  const from = f.created
  const result = await runLoad(timed(maxSeconds), (i) => ok(201)(call(t.agent, t.port, 'POST', BULK_NS, configMapBody(`bulk-${from + i}`))))
  f.created += result.count
  f.creates = result
  return result
}

/** Passes of updates so far: each changes the data to text of its own, so that no update of a pass leaves an object as it was. */
let updatePasses = 0

/** Updates of the first UPDATE_SET ConfigMaps of `default`, each PUT with changed data and no resourceVersion. */
async function updates(t: DaemonTarget, f: DaemonFigures, maxSeconds: number): Promise<LoadResult> {
  const round = ++updatePasses
  const changed = (i: number) => {
    const obj = JSON.parse(configMapBody(`cm-${i % UPDATE_SET}`)) as { data: Record<string, string> }
    obj.data['log.level'] = `debug-${round}-${i}`
    return JSON.stringify(obj)
  }
  f.updates = await runLoad(timed(maxSeconds), (i) => ok(200)(call(t.agent, t.port, 'PUT', `${NS}/cm-${i % UPDATE_SET}`, changed(i))))
  return f.updates
}

async function writes(t: DaemonTarget, f: DaemonFigures, maxSeconds: number): Promise<void> {
  await creates(t, f, maxSeconds)
  await updates(t, f, maxSeconds)
}

/**
 * Creates and updates on every target: a pass uncounted first (the daemon's
 * JavaScript compiles what a write runs as it runs it; upstream's code is
 * compiled ahead), then `rounds` measured passes over the targets, taking
 * turns in alternating order so that the machine's load over the run falls
 * on each alike; each figure is the passes together.
 */
async function measuredWrites(targets: readonly DaemonTarget[], figures: Map<TlsTarget, DaemonFigures>, rounds: number): Promise<void> {
  for (const t of targets) {
    log(`creates and updates, uncounted: ${t.label}`)
    await writes(t, figures.get(t)!, WARM_UP_SECONDS)
  }
  const runs = new Map(targets.map((t) => [t, { creates: [] as LoadResult[], updates: [] as LoadResult[] }]))
  for (let r = 0; r < rounds; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      log(`creates and updates, pass ${r + 1} of ${rounds}: ${t.label}`)
      const f = figures.get(t)!
      runs.get(t)!.creates.push(await creates(t, f, seconds))
      runs.get(t)!.updates.push(await updates(t, f, seconds))
    }
  }
  for (const t of targets) Object.assign(figures.get(t)!, { creates: combineLoads(runs.get(t)!.creates), updates: combineLoads(runs.get(t)!.updates) })
}

/** Fills `bulk` up to BULK ConfigMaps, lists them once (the watch cache then holds them all), and reads RSS. */
async function memoryWithBulk(t: DaemonTarget, f: DaemonFigures): Promise<void> {
  const from = f.created
  // Bounded in time as every load is: on a loaded machine fewer are stored, and the table says how many.
  const fill = await runLoad({ total: BULK - from, concurrency: CONNECTIONS, maxSeconds: 45 }, (i) =>
    ok(201)(call(t.agent, t.port, 'POST', BULK_NS, configMapBody(`bulk-${from + i}`))),
  )
  const list = JSON.parse(await fetchText(t.agent, t.port, `${BULK_NS}?resourceVersion=0`)) as { items?: unknown[] }
  f.bulkObjects = list.items?.length ?? 0
  if (fill.errors) log(`${t.label}: ${fill.errors} creates of the bulk fill failed`)
  f.rssBulkMiB = await rssMiB(t.pid)
  // The JavaScript heap in use (live objects and garbage not yet collected), from the daemon's own /metrics.
  const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await fetchText(t.agent, t.port, '/metrics'))?.[1]
  if (used) f.heapUsedBulkMiB = Number(used) / 1024 / 1024
}

/** GETs with wrk, then with the Node client: `passes` over the targets each, taking turns in alternating order; then the LISTs. */
async function getsAndLists(targets: TlsTarget[], figures: Map<TlsTarget, DaemonFigures>, wrkMissing: string | undefined, passes: number): Promise<void> {
  const wrkRuns = new Map<TlsTarget, WrkResult[]>(targets.map((t) => [t, []]))
  const nodeRuns = new Map<TlsTarget, LoadResult[]>(targets.map((t) => [t, []]))
  for (let r = 0; r < passes; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      if (wrkMissing) break
      log(`wrk GET, pass ${r + 1} of ${passes}: ${t.label}`)
      wrkRuns.get(t)!.push(await wrkGet(`https://127.0.0.1:${t.port}${NS}/cm-0`, TOKEN, seconds + 1))
    }
  }
  for (let r = 0; r < passes; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      log(`Node GET, pass ${r + 1} of ${passes}: ${t.label}`)
      nodeRuns.get(t)!.push(await runLoad(timed(seconds), (i) => ok(200)(call(t.agent, t.port, 'GET', `${NS}/cm-${i % UPDATE_SET}`))))
    }
  }
  for (const t of targets) {
    const f = figures.get(t)!
    if (!wrkMissing) f.wrkGet = combineWrk(wrkRuns.get(t)!)
    f.nodeGet = combineLoads(nodeRuns.get(t)!)
  }
  await measuredLists(targets.filter((t): t is DaemonTarget => 'backend' in t), figures, passes)
}

/**
 * LISTs of the 1,000 ConfigMaps of `default`, consistent and from the watch
 * cache: an uncounted pass first, as for the writes (the daemon's JavaScript
 * compiles a list's path as it first runs it), then `passes` over the targets
 * taking turns in alternating order, each rate the passes together.
 */
async function measuredLists(targets: readonly DaemonTarget[], figures: Map<TlsTarget, DaemonFigures>, passes: number): Promise<void> {
  const list = (t: DaemonTarget, query: string, maxSeconds: number) => runLoad(timed(maxSeconds), () => ok(200)(call(t.agent, t.port, 'GET', `${NS}${query}`)))
  for (const t of targets) {
    log(`LIST ${LIST_SIZE}, uncounted: ${t.label}`)
    await list(t, '', WARM_UP_SECONDS)
    await list(t, '?resourceVersion=0', WARM_UP_SECONDS)
  }
  const runs = new Map(targets.map((t) => [t, { consistent: [] as LoadResult[], cached: [] as LoadResult[] }]))
  for (let r = 0; r < passes; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      log(`LIST ${LIST_SIZE}, pass ${r + 1} of ${passes}: ${t.label}`)
      runs.get(t)!.consistent.push(await list(t, '', seconds))
      runs.get(t)!.cached.push(await list(t, '?resourceVersion=0', seconds))
    }
  }
  for (const t of targets) Object.assign(figures.get(t)!, { list: combineLoads(runs.get(t)!.consistent), list0: combineLoads(runs.get(t)!.cached) })
}

async function profileCreates(dir: string, etcd: EtcdServer, work: string): Promise<void> {
  const t = await startDaemon('profiled, etcd', { main: MAIN, backend: 'etcd', dir: join(work, 'profiled'), etcdUrl: etcd.clientUrl, cpuProfDir: dir, maxSockets: CONNECTIONS })
  try {
    await prepare(t)
    const f = emptyFigures()
    await writes(t, f, seconds * 2)
    log(`creates ${Math.round(f.creates!.perSecond)}/s, updates ${Math.round(f.updates!.perSecond)}/s; the profile is written to ${dir} as the daemon stops`)
  } finally {
    await t.stop()
  }
}

/** Creates and updates on etcd (or the embedded store), this build against `other`, in alternating rounds: rates and daemon CPU per write. */
async function compareWrites(other: string, etcd: EtcdServer, work: string): Promise<void> {
  const backend = values.backend
  if (backend !== 'etcd' && backend !== 'embedded') throw new Error(`--backend: etcd or embedded, not ${backend}`)
  const builds: Array<[string, string]> = [['this build', MAIN], ['other build', daemonMainOf(resolve(other))]]
  const sums = new Map(builds.map(([name]) => [name, { creates: 0, updates: 0, gets: 0, seconds: 0, useconds: 0, gseconds: 0, createCpu: 0, updateCpu: 0, getCpu: 0 }]))
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const [name, main] of r % 2 ? [...builds].reverse() : builds) {
      const dir = join(work, `cmp-${r}-${name.replace(/\W+/g, '-')}`)
      const t = await startDaemon(`${name} ${r}`, { main, backend, dir, etcdUrl: etcd.clientUrl, maxSockets: CONNECTIONS, clientCertificate: values['client-cert'] })
      try {
        await prepare(t)
        const s = sums.get(name)!
        const f = emptyFigures()
        const before = await cpuMs(t.pid)
        await creates(t, f, seconds)
        const mid = await cpuMs(t.pid)
        await updates(t, f, seconds)
        const end = await cpuMs(t.pid)
        const got = await runLoad(timed(seconds), (i) => ok(200)(call(t.agent, t.port, 'GET', `${NS}/cm-${i % UPDATE_SET}`)))
        s.gets += got.count
        s.gseconds += got.seconds
        s.getCpu += (await cpuMs(t.pid)) - end
        s.creates += f.creates!.count
        s.seconds += f.creates!.seconds
        s.createCpu += mid - before
        s.updates += f.updates!.count
        s.useconds += f.updates!.seconds
        s.updateCpu += end - mid
        log(`round ${r + 1}, ${name}: creates ${Math.round(f.creates!.perSecond)}/s, updates ${Math.round(f.updates!.perSecond)}/s, GETs ${Math.round(got.perSecond)}/s`)
      } finally {
        await t.stop()
      }
    }
  }
  for (const [name, s] of sums) {
    const line = `${name}: creates ${Math.round(s.creates / s.seconds)}/s, ${Math.round((1000 * s.createCpu) / s.creates)} µs daemon CPU each; updates ${Math.round(s.updates / s.useconds)}/s, ${Math.round((1000 * s.updateCpu) / s.updates)} µs each; GETs ${Math.round(s.gets / s.gseconds)}/s, ${Math.round((1000 * s.getCpu) / s.gets)} µs each`
    process.stdout.write(`${line}\n`)
  }
}

async function suite(etcd: EtcdServer, work: string): Promise<SuiteFigures> {
  const wrkMissing = ensureWrk(log)
  const daemons: DaemonTarget[] = []
  const all: TlsTarget[] = []
  try {
    // The bin keeps a V8 code cache beside its bundle, written by its first start after a build: one start
    // beforehand writes it, so that the measured starts are what every later start is.
    // It also writes the certificates the measured starts are given, as a deployment's are (upstream's start in the
    // issue's runs was given its own): generating a CA and keys is a first start's, not every start's.
    // Templates left by earlier runs would decide which measured start begins from one: none, so the narrative holds.
    await forgetStartupTemplates(ROOT)
    log('a first start writes the code cache and the certificates …')
    await (await startDaemon('first start', { main: MAIN, backend: 'embedded', dir: join(work, 'first-start'), maxSockets: 1 })).stop()
    for (const backend of ['embedded', 'etcd'] as const) {
      const label = backend === 'etcd' ? 'this server on etcd' : 'on its embedded store'
      log(`starting the daemon ${label} …`)
      await cp(join(work, 'first-start', 'pki'), join(work, backend, 'pki'), { recursive: true })
      const t = await startDaemon(label, { main: MAIN, backend, dir: join(work, backend), etcdUrl: etcd.clientUrl, maxSockets: CONNECTIONS })
      daemons.push(t)
    }
    const [embeddedDaemon, etcdDaemon] = daemons as [DaemonTarget, DaemonTarget]
    let upstream: DaemonTarget | undefined
    if (values.upstream) {
      log(`starting upstream (${values.upstream}) on etcd …`)
      const certDir = join(work, 'first-start', 'pki')
      upstream = await startUpstream('upstream on etcd', { binary: resolve(values.upstream), dir: join(work, 'upstream'), certDir, etcdUrl: etcd.clientUrl, maxSockets: CONNECTIONS })
      daemons.push(upstream)
    }
    const figures = new Map<TlsTarget, DaemonFigures>(daemons.map((t) => [t, emptyFigures()]))
    // Memory at ready first, before anything else touches either daemon.
    for (const t of daemons) Object.assign(figures.get(t)!, { readyMs: t.readyMs, rssReadyMiB: await rssMiB(t.pid) })
    for (const t of daemons) await prepare(t)
    const body = await fetchText(embeddedDaemon.agent, embeddedDaemon.port, `${NS}/cm-0`)
    const limit = await startLimitServer(join(work, 'limit'), embeddedDaemon.certDir, body, CONNECTIONS)
    all.push(...daemons, limit)
    figures.set(limit, emptyFigures())

    await getsAndLists(all, figures, wrkMissing, passes)
    await measuredWrites(daemons, figures, passes)
    log('creates and updates: etcd itself, the same transactions …')
    const value = await storedValue(etcd.clientUrl, `${etcdDaemon.etcdPrefix}/configmaps/default/`)
    const direct = await measureEtcdDirect(etcd.clientUrl, value, { load: timed(seconds), updateSet: UPDATE_SET, prefix: '/etcd-direct' })

    for (const t of daemons) {
      for (const watchers of [100, 1000]) {
        log(`watch, ${watchers} watchers: ${t.label}`)
        const result = await measureWatchDelivery(t, { namespace: 'watch', watchers, writes: 20, maxSeconds: 10, prefix: `w${watchers}` })
        if (watchers === 100) figures.get(t)!.watch100 = result
        else figures.get(t)!.watch1000 = result
      }
    }
    for (const t of daemons) {
      log(`memory with ${BULK.toLocaleString('en-US')} ConfigMaps: ${t.label}`)
      await memoryWithBulk(t, figures.get(t)!)
    }
    return {
      embedded: figures.get(embeddedDaemon)!,
      etcd: figures.get(etcdDaemon)!,
      ...(upstream ? { upstream: figures.get(upstream)! } : {}),
      limit: figures.get(limit)!,
      direct,
      wrkMissing,
      seconds,
      passes,
      valueBytes: value.length,
    }
  } finally {
    await Promise.all([...new Set([...daemons, ...all])].map((t) => t.stop().catch(() => {})))
  }
}

const t0 = performance.now()
const work = await mkdtemp(join(tmpdir(), 'apiserver-daemon-suite-'))
const etcd = await EtcdServer.start()
try {
  if (values['profile-creates']) await profileCreates(resolve(values['profile-creates']), etcd, work)
  else if (values['compare-writes']) await compareWrites(values['compare-writes'], etcd, work)
  else {
    // --render-figures writes the section again from a run's saved figures, measuring nothing.
    const saved = values['render-figures'] ? (JSON.parse(await readFile(values['render-figures'], 'utf8')) as SuiteFigures & { runSeconds: number }) : undefined
    const figures = saved ?? (await suite(etcd, work))
    if (values['save-figures']) await writeFile(values['save-figures'], JSON.stringify({ ...figures, runSeconds: (performance.now() - t0) / 1000 }))
    const section = renderDaemonSuite(figures, saved?.runSeconds ?? (performance.now() - t0) / 1000)
    process.stdout.write(`${section}\n`)
    if (!values['no-write']) await replaceSection(ROOT, '<!-- daemon-suite: begin -->', '<!-- daemon-suite: end -->', section)
  }
} finally {
  await etcd.destroy()
  await rm(work, { recursive: true, force: true })
}
