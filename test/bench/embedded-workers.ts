/**
 * The embedded store shared by several processes, as the workers of
 * `--workers` share it, against the store alone on its file:
 *
 *   node --import tsx test/bench/embedded-workers.ts [creates per writer]
 *
 * - sequential creates per second of one store holding its file exclusively,
 *   of one store sharing it (each write a transaction under the write lock
 *   that reads the next revision from the file), and of two processes
 *   writing into one file at once (their sum);
 * - how long a commit in one process takes to reach a watch in another:
 *   nudged (the writer's word passed on through IPC, as the primary passes it
 *   between workers) and by looking at the file alone (every 100 ms).
 *
 * It rewrites its own section of docs/benchmarks.md (between the markers).
 * Figures only; nothing here passes or fails.
 */
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { KubeObject } from '../../core/machinery/object.js'
import type { SqlStorage } from '../../core/storage/sql/sql-storage.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { ms } from './format.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const PREFIX = '/registry/configmaps/default/'
const ROUNDS = 3
const padding = 'x'.repeat(400) // about 500 bytes stored per object, as a small ConfigMap
const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: crypto.randomUUID() }, data: { padding } })
const now = () => performance.timeOrigin + performance.now()

type ChildMessage = { kind: 'rate'; perSecond: number } | { kind: 'committed'; revision: number; at: number }

/** A writing child: `creates <dir> <tag> <n>` or `latency <dir> <n> <nudge|poll>`. */
async function child(args: string[]): Promise<void> {
  const send = (m: ChildMessage) => process.send!(m)
  const [mode, dir, third, fourth] = args
  if (mode === 'creates') {
    const store = await openEmbeddedStore({ dataDir: dir!, shared: {} })
    await new Promise<void>((resolve) => process.once('message', () => resolve()))
    const n = Number(fourth)
    const start = now()
    for (let i = 0; i < n; i++) await store.create(`${PREFIX}${third}-${i}`, configMap(`${third}-${i}`))
    send({ kind: 'rate', perSecond: n / ((now() - start) / 1000) })
    await store.close()
    return
  }
  const store = await openEmbeddedStore({ dataDir: dir!, shared: {} })
  await new Promise<void>((resolve) => process.once('message', () => resolve()))
  for (let i = 0; i < Number(third); i++) {
    const created = await store.create(`${PREFIX}late-${fourth}-${i}`, configMap(`late-${i}`))
    const at = now()
    // Without a nudge the reader still needs the time of each acknowledgement: sent all the same, not acted on.
    send({ kind: 'committed', revision: Number(created.metadata.resourceVersion), at })
    await new Promise((r) => setTimeout(r, 3 + Math.random() * 4))
  }
  await store.close()
}

/** A child process running `child(args)`, and its exit (listened for from the start: it may come before the parent asks). */
function startChild(args: string[]) {
  const process = fork(import.meta.filename, ['child', ...args], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const exited = new Promise((resolve) => process.once('exit', resolve))
  return Object.assign(process, { exited })
}

async function alone(dir: string, shared: boolean, n: number): Promise<number> {
  const store = await openEmbeddedStore({ dataDir: dir, ...(shared ? { shared: {} } : {}) })
  const start = now()
  for (let i = 0; i < n; i++) await store.create(`${PREFIX}cm-${i}`, configMap(`cm-${i}`))
  const rate = n / ((now() - start) / 1000)
  await store.close()
  return rate
}

async function twoWriters(dir: string, n: number): Promise<{ sum: number; each: number[] }> {
  const children = ['a', 'b'].map((tag) => startChild(['creates', dir, tag, String(n)]))
  // Both open the file first, then start together.
  await new Promise((r) => setTimeout(r, 1500))
  const rates = children.map((c) => new Promise<number>((resolve) => c.on('message', (m: ChildMessage) => m.kind === 'rate' && resolve(m.perSecond))))
  for (const c of children) c.send('go')
  const each = await Promise.all(rates)
  await Promise.all(children.map((c) => c.exited))
  return { sum: each.reduce((a, b) => a + b, 0), each }
}

async function latency(dir: string, n: number, how: 'nudge' | 'poll'): Promise<{ p50: number; p99: number; max: number }> {
  const reader: SqlStorage = await openEmbeddedStore({ dataDir: dir, shared: {} })
  const acknowledged = new Map<number, number>()
  const seen = new Map<number, number>()
  const w = reader.watch(PREFIX, { resourceVersion: String(await reader.currentRevision()) })
  const watching = (async () => {
    for await (const e of w) {
      seen.set(e.revision, now())
      if (seen.size === n) break
    }
  })()
  const writer = startChild(['latency', dir, String(n), how])
  writer.on('message', (m: ChildMessage) => {
    if (m.kind !== 'committed') return
    acknowledged.set(m.revision, m.at)
    if (how === 'nudge') reader.changed()
  })
  await new Promise((r) => setTimeout(r, 1500))
  writer.send('go')
  // The follower's timer does not keep a process alive: this does, until the last commit is seen.
  const keepAlive = setInterval(() => {}, 1000)
  await watching
  clearInterval(keepAlive)
  await writer.exited
  await reader.close()
  const delays = [...seen].map(([revision, at]) => at - acknowledged.get(revision)!).sort((a, b) => a - b)
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!
  return { p50: at(0.5), p99: at(0.99), max: delays.at(-1)! }
}

interface Figures {
  creates: number
  exclusive: number[]
  shared: number[]
  two: { sum: number; each: number[] }[]
  writes: number
  nudged: Delays
  polled: Delays
  /** The machine's load average over the minute before the run. */
  load: number
}

type Delays = Awaited<ReturnType<typeof latency>>

async function measure(n: number): Promise<Figures> {
  const load = loadavg()[0]!
  const root = mkdtempSync(join(tmpdir(), 'embedded-workers-bench-'))
  try {
    // Rounds alternate between the three so that disk and machine noise hit them all.
    const figures = { exclusive: [] as number[], shared: [] as number[], two: [] as { sum: number; each: number[] }[] }
    for (let round = 0; round < ROUNDS; round++) {
      figures.exclusive.push(await alone(join(root, `exclusive-${round}`), false, n))
      figures.shared.push(await alone(join(root, `shared-${round}`), true, n))
      figures.two.push(await twoWriters(join(root, `two-${round}`), n))
    }
    const writes = Math.min(300, n)
    const nudged = await latency(join(root, 'nudged'), writes, 'nudge')
    const polled = await latency(join(root, 'polled'), writes, 'poll')
    return { creates: n, ...figures, writes, nudged, polled, load }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const BEGIN = '<!-- embedded-workers: begin -->'
const END = '<!-- embedded-workers: end -->'

function median<T>(xs: T[], by: (x: T) => number): T {
  return [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!
}

export function renderSection(f: Figures, date: Date): string {
  const rate = (x: number) => Math.round(x).toLocaleString('en-US')
  const rounds = (xs: number[]) => xs.map(rate).join(', ')
  const exclusive = median(f.exclusive, (x) => x)
  const shared = median(f.shared, (x) => x)
  const two = median(f.two, (r) => r.sum)
  const delays = (d: Delays) => `${ms(d.p50)} | ${ms(d.p99)} | ${ms(d.max)}`
  const spread = Math.max(...[f.exclusive, f.shared, f.two.map((r) => r.sum)].map((xs) => (Math.max(...xs) - Math.min(...xs)) / Math.max(...xs)))
  return `${BEGIN}
## The embedded store shared by the workers

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/embedded-workers.ts ${f.creates}\`, load average ${f.load.toFixed(1)} when it began
(the rounds of one figure differ by up to ${Math.round(spread * 100)}%).

How \`--workers\` shares the embedded store: every worker opens the one file
(SQLite's write-ahead log shared between processes), each write is a
transaction under the write lock that takes the next revision from the
file, and each worker publishes the others' commits to its watches, told
through IPC or by looking at the file every 100 ms. The other way, one
process owning the file and serving the storage calls to the others over a
unix socket, would add a round trip to every read and write and a process
whose death stops every worker; here reads stay local SQLite reads and no
process owns the file.

Sequential creates through the Storage interface (about 500 bytes stored
each), ${ROUNDS} rounds alternating between the three, median creates/s:

| Writers | creates/s |
| --- | --- |
| one store holding its file exclusively (\`--workers=1\`) | ${rate(exclusive)} (rounds: ${rounds(f.exclusive)}) |
| one store sharing its file, no other writer | ${rate(shared)} (rounds: ${rounds(f.shared)}) |
| two processes writing into one file at once, together | ${rate(two.sum)} (${two.each.map(rate).join(' + ')}; rounds: ${rounds(f.two.map((r) => r.sum))}) |

From a commit in one process, acknowledged, to its event in a watch of a
store in another process, ${f.writes} writes a few milliseconds apart:

| How the watching process learns of the commit | p50 | p99 | max |
| --- | --- | --- | --- |
| nudged: the writer's word passed on through IPC, as the first process passes it between workers | ${delays(f.nudged)} |
| by looking at the file every 100 ms alone | ${delays(f.polled)} |

Sharing the file cost one writer ${Math.round((1 - shared / exclusive) * 100)}% of its creates here (the
transaction under the file lock, the WAL index in shared memory); two
writers wait for each other's lock, and together wrote ${(two.sum / exclusive).toFixed(2)}× what one
store alone did: the workers add cores for the rest of a request (TLS,
decoding, admission, encoding), not for the store's writes. With the nudge
a watch in another process was ${ms(f.nudged.p50)} behind a commit at the median.
${END}
`
}

if (process.argv[2] === 'child') await child(process.argv.slice(3))
else {
  const section = renderSection(await measure(Number(process.argv[2] ?? 2000)), new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
}
