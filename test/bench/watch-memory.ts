/**
 * Watch fan-out and memory at ready, this build beside another one in one
 * run: each build's daemon on the embedded store and on a local etcd, its RSS
 * (and heap, from its own /metrics) at the first `/readyz` 200, then 1,000
 * (and 100) watchers of one namespace's ConfigMaps receiving creates
 * (daemon-watch.ts). The builds take turns per figure, so a change of the
 * machine's load falls on both.
 *
 *   node --import tsx test/bench/watch-memory.ts [--baseline <dir with dist/>] [--writes N] [--watchers 100,1000]
 *     [--backends embedded,etcd] [--rounds N] [--profile DIR (each daemon writes a CPU profile there)]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { measureWatchDelivery, type WatchDelivery } from './daemon-watch.js'
import { call, cpuMs, fetchText, rssMiB, startDaemon, type Backend, type DaemonTarget } from './tls-targets.js'

const ROOT = join(import.meta.dirname, '..', '..')
const { values } = parseArgs({ options: { baseline: { type: 'string' }, writes: { type: 'string', default: '20' }, profile: { type: 'string' }, backends: { type: 'string', default: 'embedded,etcd' }, rounds: { type: 'string', default: '1' }, watchers: { type: 'string', default: '100,1000' } } })
const builds: Array<[string, string]> = [['this build', join(ROOT, 'dist', 'runtimes', 'node', 'main.js')]]
if (values.baseline) builds.push(['baseline', join(resolve(values.baseline), 'dist', 'runtimes', 'node', 'main.js')])
const log = (text: string) => void process.stderr.write(`${text}\n`)

interface Row {
  build: string
  backend: Backend
  readyMs: number
  rssReadyMiB: number
  heapReadyMiB: number
  watches: WatchDelivery[]
}

async function heapUsedMiB(t: DaemonTarget): Promise<number> {
  const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await fetchText(t.agent, t.port, '/metrics'))?.[1]
  return used ? Number(used) / 1024 / 1024 : Number.NaN
}

const work = await mkdtemp(join(tmpdir(), 'watch-memory-'))
const etcd = await EtcdServer.start()
const rows: Row[] = []
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
        for (const watchers of values.watchers.split(',').map(Number)) {
          log(`${label}: ${watchers} watchers`)
          row.watches.push(await measureWatchDelivery(t, { namespace: 'watch', watchers, writes: Number(values.writes), maxSeconds: 20, prefix: `w${watchers}`, cpuMs: () => cpuMs(t.pid) }))
        }
        rows.push(row)
      } finally {
        await t.stop()
      }
    }
  }
  }
} finally {
  await etcd.destroy()
  await rm(work, { recursive: true, force: true })
}

const ms = (v: number) => (v < 10 ? v.toFixed(1) : Math.round(v).toString())
process.stdout.write('| build | backend | ready from exec | RSS at ready | heap at ready | watchers | p50 / p99 from the 201 | the last watcher p99 | p50 / p99 from the send | server CPU per delivery |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n')
for (const r of rows) {
  for (const w of r.watches) {
    process.stdout.write(
      `| ${r.build} | ${r.backend} | ${Math.round(r.readyMs)} ms | ${Math.round(r.rssReadyMiB)} MiB | ${Math.round(r.heapReadyMiB)} MiB | ${w.watchers} | ${ms(w.p50Ms)} / ${ms(w.p99Ms)} ms | ${ms(w.allP99Ms)} ms | ${ms(w.fromSendP50Ms)} / ${ms(w.fromSendP99Ms)} ms${w.missed ? ` (${w.missed} missed)` : ''} | ${w.cpuPerDeliveryUs === undefined ? '—' : `${Math.round(w.cpuPerDeliveryUs)} µs`} |\n`,
    )
  }
}
