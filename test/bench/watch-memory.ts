/**
 * Watch fan-out and memory at ready, this build beside another one in one
 * run: each build's daemon on the embedded store and on a local etcd, its RSS
 * (and heap, from its own /metrics) at the first `/readyz` 200, then 1,000
 * (and 100) watchers of one namespace's ConfigMaps receiving creates
 * (daemon-watch.ts). The builds take turns per figure, so a change of the
 * machine's load falls on both. With `--limit`, each round also drives the
 * watch limit (watch-limit.ts: a plain Node TLS server writing one fixed
 * event line to every watch); with `--http2 N`, every figure is taken again
 * with the watches as streams of N HTTP/2 connections.
 *
 *   node --import tsx test/bench/watch-memory.ts [--baseline <dir with dist/>] [--writes N] [--watchers 100,1000]
 *     [--backends embedded,etcd] [--rounds N] [--limit] [--http2 N]
 *     [--profile DIR (each daemon writes a CPU profile there)]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { measureWatchDelivery, type WatchDelivery } from './daemon-watch.js'
import { call, cpuMs, fetchText, rssMiB, startDaemon, type Backend, type DaemonTarget, type TlsTarget } from './tls-targets.js'
import { startWatchLimitServer } from './watch-limit.js'
import { daemonMainOf } from './package-entry.js'

const ROOT = join(import.meta.dirname, '..', '..')
const { values } = parseArgs({ options: { baseline: { type: 'string' }, writes: { type: 'string', default: '20' }, profile: { type: 'string' }, backends: { type: 'string', default: 'embedded,etcd' }, rounds: { type: 'string', default: '1' }, watchers: { type: 'string', default: '100,1000' }, limit: { type: 'boolean', default: false }, http2: { type: 'string', default: '0' } } })
const builds: Array<[string, string]> = [['this build', join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')]]
if (values.baseline) builds.push(['baseline', daemonMainOf(resolve(values.baseline))])
const log = (text: string) => void process.stderr.write(`${text}\n`)

interface Row {
  build: string
  backend: Backend | '—'
  readyMs: number
  rssReadyMiB: number
  heapReadyMiB: number
  watches: WatchDelivery[]
}

async function heapUsedMiB(t: DaemonTarget): Promise<number> {
  const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await fetchText(t.agent, t.port, '/metrics'))?.[1]
  return used ? Number(used) / 1024 / 1024 : Number.NaN
}

/** HTTP/1.1 (a connection per watch), then, with --http2, the same as streams of that many HTTP/2 connections. */
const connectionModes = [0, ...(Number(values.http2) > 0 ? [Number(values.http2)] : [])]

async function measureWatches(t: TlsTarget, label: string): Promise<WatchDelivery[]> {
  const watches: WatchDelivery[] = []
  for (const http2Connections of connectionModes) {
    for (const watchers of values.watchers.split(',').map(Number)) {
      log(`${label}: ${watchers} watchers${http2Connections ? ` on ${http2Connections} HTTP/2 connections` : ''}`)
      const prefix = `w${watchers}-h${http2Connections}`
      watches.push(await measureWatchDelivery(t, { namespace: 'watch', watchers, writes: Number(values.writes), maxSeconds: 20, prefix, cpuMs: () => cpuMs(t.pid), http2Connections }))
    }
  }
  return watches
}

const work = await mkdtemp(join(tmpdir(), 'watch-memory-'))
const etcd = await EtcdServer.start()
const rows: Row[] = []
let certDir: string | undefined
try {
  for (let round = 0; round < Number(values.rounds); round++) {
  for (const backend of values.backends.split(',') as Backend[]) {
    // Each round starts with the other build, so neither always goes first.
    for (const [build, main] of round % 2 ? [...builds].reverse() : builds) {
      const label = `${build} ${backend} ${round}`
      const t = await startDaemon(label, { main, backend, dir: join(work, label.replace(/\W+/g, '-')), etcdUrl: etcd.clientUrl, maxSockets: 8, ...(values.profile ? { cpuProfDir: resolve(values.profile) } : {}) })
      try {
        const row: Row = { build, backend, readyMs: t.readyMs, rssReadyMiB: await rssMiB(t.pid), heapReadyMiB: await heapUsedMiB(t), watches: [] }
        await call(t.agent, t.port, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watch' } }))
        row.watches = await measureWatches(t, label)
        rows.push(row)
        certDir = t.certDir
      } finally {
        await t.stop()
      }
    }
  }
    if (values.limit && certDir) {
      // The daemons' serving certificate, so the TLS work per record is the same.
      const limit = await startWatchLimitServer(join(work, `limit-${round}`), certDir, 8)
      try {
        rows.push({ build: 'the limit', backend: '—', readyMs: limit.readyMs, rssReadyMiB: await rssMiB(limit.pid), heapReadyMiB: Number.NaN, watches: await measureWatches(limit, `the limit ${round}`) })
      } finally {
        await limit.stop()
      }
    }
  }
} finally {
  await etcd.destroy()
  await rm(work, { recursive: true, force: true })
}

const ms = (v: number) => (v < 10 ? v.toFixed(1) : Math.round(v).toString())
process.stdout.write('| build | backend | ready from exec | RSS at ready | heap at ready | watchers | connections | p50 / p99 from the 201 | the last watcher p99 | p50 / p99 from the send | create p50 / p99 | server CPU per delivery |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n')
for (const r of rows) {
  for (const w of r.watches) {
    process.stdout.write(
      `| ${r.build} | ${r.backend} | ${Math.round(r.readyMs)} ms | ${Math.round(r.rssReadyMiB)} MiB | ${Number.isNaN(r.heapReadyMiB) ? '—' : `${Math.round(r.heapReadyMiB)} MiB`} | ${w.watchers} | ${w.http2Connections ? `${w.http2Connections} HTTP/2` : 'one HTTP/1.1 each'} | ${ms(w.p50Ms)} / ${ms(w.p99Ms)} ms | ${ms(w.allP99Ms)} ms | ${ms(w.fromSendP50Ms)} / ${ms(w.fromSendP99Ms)} ms${w.missed ? ` (${w.missed} missed)` : ''} | ${ms(w.createP50Ms)} / ${ms(w.createP99Ms)} ms | ${w.cpuPerDeliveryUs === undefined ? '—' : `${Math.round(w.cpuPerDeliveryUs)} µs`} |\n`,
    )
  }
}
