/**
 * `--workers 1` against `--workers N` (N: the cores this process may use,
 * at least 2), on etcd and on the embedded store: the same mix of requests
 * for each (GET, create, an update that changes the object, an update that
 * changes nothing, delete) from a keep-alive HTTPS client with 16 requests
 * in flight (so 16 connections, which the workers share out as they accept
 * them). For each: throughput, p50 and p99, and the CPU the daemon's
 * processes (the primary and its workers) spent per request. The client,
 * etcd and the workers share this machine's cores, so the ratio says what
 * more workers give here, not on a machine with cores to spare. Figures
 * only: nothing passes or fails.
 *
 * `npm run bench` runs it; alone: `npm run build && node --import tsx test/bench/workers.ts [--storage etcd|embedded]`.
 * It rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Daemon } from '../e2e/daemon.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { type Client, clientOf } from './daemon-client.js'
import { ms } from './format.js'
import { type LoadResult, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

/** Each kind of request: this many, 16 in flight, for at most this long. */
const LOAD = { total: 2000, concurrency: 16, maxSeconds: 8 }
/** After start-up: the workers' first lease writes and the controllers' start settle before measuring. */
const SETTLE_MS = 3000
/** ConfigMaps the GETs and updates cycle through. */
const OBJECTS = 64
const NAMESPACE_PATH = '/api/v1/namespaces/default/configmaps'

export const STORAGES = ['etcd', 'embedded'] as const
type StorageKind = (typeof STORAGES)[number]

const MIX = ['GET', 'create', 'update (changed)', 'update (no change)', 'delete'] as const
type RequestKind = (typeof MIX)[number]

interface Measured extends LoadResult {
  /** CPU time of the daemon's processes per request, µs. */
  cpuMicros: number
}

interface Figures {
  storage: StorageKind
  workers: number
  /** A busy loop ran in another process on this machine meanwhile (the control: one worker sharing the cores). */
  busyLoopBeside: boolean
  /** Uncounted passes of the whole mix before the measured one (warmUp). */
  warmUpPasses: number
  results: Record<RequestKind, Measured>
}

/**
 * A process that keeps one core busy for as long as it lives: what a second
 * worker is to the first, without serving anything.
 */
function startBusyLoop(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
}

/** Clock ticks (10 ms on Linux) of user and system time of a process, from /proc. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The CPU of a daemon and its workers (its child processes), ms. */
function daemonCpuMs(pid: number): number {
  let ticks = cpuTicks(pid)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) ticks += cpuTicks(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10
}

const configMap = (name: string, value: string) => ({ metadata: { name }, data: { value } })

/**
 * One kind of request under load, on the ConfigMaps of `tag`; a fresh object per create and per delete (named
 * after `pass`, so that passes over one tag never meet each other's), so every answer is the expected one.
 */
async function measureKind(client: Client, pid: number, kind: RequestKind, tag: string, pass = 'measured'): Promise<Measured> {
  const name = (i: number) => `${tag}-${i % OBJECTS}`
  const stored = new Map<number, unknown>()
  if (kind === 'update (no change)') {
    for (let i = 0; i < OBJECTS; i++) stored.set(i, JSON.parse((await client.call('GET', `${NAMESPACE_PATH}/${name(i)}`)).text))
  }
  if (kind === 'delete') {
    await runLoad({ ...LOAD, maxSeconds: 60 }, async (i) => (await client.call('POST', NAMESPACE_PATH, configMap(`${tag}-${pass}-gone-${i}`, 'x'))).status === 201)
  }
  const one: Record<RequestKind, (i: number) => Promise<boolean>> = {
    GET: async (i) => (await client.call('GET', `${NAMESPACE_PATH}/${name(i)}`)).status === 200,
    create: async (i) => (await client.call('POST', NAMESPACE_PATH, configMap(`${tag}-${pass}-new-${i}`, 'x'))).status === 201,
    'update (changed)': async (i) => (await client.call('PUT', `${NAMESPACE_PATH}/${name(i)}`, configMap(name(i), `v${i}`))).status === 200,
    'update (no change)': async (i) => (await client.call('PUT', `${NAMESPACE_PATH}/${name(i)}`, stored.get(i % OBJECTS))).status === 200,
    delete: async (i) => (await client.call('DELETE', `${NAMESPACE_PATH}/${tag}-${pass}-gone-${i}`)).status === 200,
  }
  const cpuBefore = daemonCpuMs(pid)
  const result = await runLoad(LOAD, one[kind])
  const cpuMicros = ((daemonCpuMs(pid) - cpuBefore) * 1000) / Math.max(1, result.count)
  return { ...result, cpuMicros }
}

/** Warm-up passes end once a pass's CPU per request is within this share of the pass before. */
const STEADY_WITHIN = 0.1
const MIN_WARM_UP_PASSES = 2
const MAX_WARM_UP_PASSES = 8

/**
 * The whole mix, uncounted, until the daemon's CPU per request settles (two
 * passes in a row within STEADY_WITHIN, at most MAX_WARM_UP_PASSES): each
 * worker's code is compiled by the requests it takes, on V8's helper threads,
 * which have the least of the cores while the workers, the client and etcd
 * keep both busy. One pass was not enough: two workers were still compiling
 * (hundreds of optimizations in the measured pass, against a handful once
 * settled) and spent up to twice the CPU per request of one. Returns the
 * number of passes run.
 */
async function warmUp(client: Client, pid: number, tag: string): Promise<number> {
  let before: number | undefined
  for (let pass = 1; ; pass++) {
    const cpuBefore = daemonCpuMs(pid)
    let requests = 0
    for (const kind of MIX) requests += (await measureKind(client, pid, kind, tag, `pass-${pass}`)).count
    const cpuPerRequest = (daemonCpuMs(pid) - cpuBefore) / Math.max(1, requests)
    const settled = before !== undefined && Math.abs(cpuPerRequest - before) <= STEADY_WITHIN * before
    if ((settled && pass >= MIN_WARM_UP_PASSES) || pass >= MAX_WARM_UP_PASSES) return pass
    before = cpuPerRequest
  }
}

async function measureWith(storage: StorageKind, workers: number, etcd: EtcdServer | undefined, busyLoopBeside = false): Promise<Figures> {
  const daemon = await Daemon.start([...(etcd ? [`--etcd-servers=${etcd.clientUrl}`] : []), `--workers=${workers}`])
  const client = clientOf(daemon)
  let busyLoop: ChildProcess | undefined
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS))
    const tag = `${storage}-${workers}${busyLoopBeside ? '-beside-a-busy-loop' : ''}`
    for (const set of [tag, `${tag}-warm-up`]) for (let i = 0; i < OBJECTS; i++) await client.call('POST', NAMESPACE_PATH, configMap(`${set}-${i}`, 'v'))
    const warmUpPasses = await warmUp(client, daemon.process.pid!, `${tag}-warm-up`)
    if (busyLoopBeside) busyLoop = startBusyLoop()
    const results = {} as Record<RequestKind, Measured>
    for (const kind of MIX) results[kind] = await measureKind(client, daemon.process.pid!, kind, tag)
    return { storage, workers, busyLoopBeside, warmUpPasses, results }
  } finally {
    busyLoop?.kill('SIGKILL')
    client.close()
    await daemon.stop()
  }
}

/** The worker counts compared: 1 and the cores this process may use (at least 2). */
export function workerCounts(): [number, number] {
  return [1, Math.max(2, availableParallelism())]
}

export async function measureWorkers(storages: readonly StorageKind[], log: (line: string) => void = () => {}): Promise<Figures[]> {
  const figures: Figures[] = []
  const [one, many] = workerCounts()
  for (const storage of storages) {
    const etcd = storage === 'etcd' ? await EtcdServer.start() : undefined
    try {
      for (const workers of [one, many]) {
        log(`workers: ${storage}, --workers=${workers} …`)
        figures.push(await measureWith(storage, workers, etcd))
      }
      log(`workers: ${storage}, --workers=${one} with a busy loop beside it …`)
      figures.push(await measureWith(storage, one, etcd, true))
    } finally {
      await etcd?.destroy()
    }
  }
  return figures
}

const BEGIN = '<!-- workers: begin -->'
const END = '<!-- workers: end -->'

const rate = (r: LoadResult) => `${Math.round(r.perSecond).toLocaleString('en-US')}/s`

function table(one: Figures, many: Figures, busy: Figures | undefined): string {
  const cell = (r: Measured) => `${rate(r)} (p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}; ${Math.round(r.cpuMicros).toLocaleString('en-US')} µs CPU${r.errors ? `; ${r.errors} errors` : ''})`
  const rows = MIX.map((kind) => {
    const cells = [cell(one.results[kind]), cell(many.results[kind]), `${(many.results[kind].perSecond / one.results[kind].perSecond).toFixed(2)}×`]
    if (busy) cells.push(cell(busy.results[kind]))
    return `| ${kind} | ${cells.join(' | ')} |`
  })
  const head = [`request`, `\`--workers=${one.workers}\``, `\`--workers=${many.workers}\``, `${many.workers} / ${one.workers}`, ...(busy ? [`\`--workers=${one.workers}\`, a busy loop beside it`] : [])]
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows].join('\n')
}

export function renderWorkersSection(figures: Figures[], date: Date): string {
  const [one, many] = workerCounts()
  const of = (storage: StorageKind, workers: number, busyLoopBeside = false) => figures.find((f) => f.storage === storage && f.workers === workers && f.busyLoopBeside === busyLoopBeside)
  const sections = STORAGES.filter((storage) => figures.some((f) => f.storage === storage)).map(
    (storage) =>
      `### On ${storage === 'etcd' ? 'one etcd member' : 'the embedded store'}\n\n${table(of(storage, one)!, of(storage, many)!, of(storage, one, true))}\n\n` +
      `Warm-up passes: ${[of(storage, one), of(storage, many), of(storage, one, true)].filter((f) => f !== undefined).map((f) => `${f.workers} worker${f.workers > 1 ? 's' : ''}${f.busyLoopBeside ? ' beside the busy loop' : ''} ${f.warmUpPasses}`).join(', ')}.`,
  )
  return `${BEGIN}
## One daemon on several cores: \`--workers\`

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/workers.ts\` (after \`npm run build\`; \`npm run bench\` runs it too).

\`--workers\` ${one} against ${many}: the daemon with default flags and \`--workers=${one}\`, then \`--workers=${many}\`, on one etcd member
(\`--etcd-servers\`) and then on its embedded store. The client keeps ${LOAD.concurrency} requests in flight over
keep-alive HTTPS as the admin, so the workers share its ${LOAD.concurrency} connections; each kind of request runs
${LOAD.total.toLocaleString('en-US')} times or ${LOAD.maxSeconds} s, whichever ends first, on ${OBJECTS} ConfigMaps (creates and deletes on
fresh ones), after passes of the same mix uncounted until the daemon's CPU per request settles (V8 compiling
each worker's code: two passes in a row within ${Math.round(STEADY_WITHIN * 100)}%, at most ${MAX_WARM_UP_PASSES}; the passes each run took are under the tables). *Update (no change)* PUTs the object as it was read, which is answered without a write.
CPU is that of the daemon's processes (the primary and its workers) per request. The client, etcd and the
workers all run on this machine's cores: the ratio is what more workers give when nothing else has a
core to spare, not what they give on a larger machine. The last column is the control: one worker
again, with another process running a busy loop meanwhile, which takes a core as a second worker would
and serves nothing. The rate one worker keeps beside the loop is what taking a core from the client and
etcd costs on this machine; the CPU per request of the second worker's column against the control's is
what two workers cost beyond that (each serving half the requests, and each keeping its own caches).

${sections.join('\n\n')}
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const log = (line: string) => void process.stderr.write(`${line}\n`)
  const { values } = parseArgs({ options: { storage: { type: 'string', multiple: true } } })
  const storages = STORAGES.filter((s) => !values.storage || values.storage.includes(s))
  const section = renderWorkersSection(await measureWorkers(storages, log), new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
