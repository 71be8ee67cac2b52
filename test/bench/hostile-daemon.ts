/**
 * GET latency as a user of the daemon sees it while hostile input arrives:
 * the built daemon over TLS on loopback, GETs from a client process of its
 * own (hostile-get-client.ts, one keep-alive connection, one GET at a time),
 * the fuzz suite's worst inputs sent back to back from this process on
 * another connection. Idle, then under attack, in rounds. Figures only.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { CRDS, fuzzResources } from '../fuzz/fuzz-server.js'
import { CONFIGMAPS, type FuzzRequest, THINGS } from '../fuzz/worst-inputs.js'
import { stopDaemon, timedStart } from './daemon.js'
import type { HostileFigures, HostileRound, PooledFigures, SlowGets } from './hostile-input.js'
import type { SenderSet, SentRequest } from './hostile-sender.js'
import { type LoadResult, median, percentile } from './load.js'

/** The daemon's certificates in its --cert-dir, as daemon.ts lays the run's directory out. */
export const certDirIn = (dir: string): string => join(dir, 'pki')

export async function adminAgent(dir: string): Promise<Agent> {
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(certDirIn(dir), f), 'utf8')))
  return new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key })
}

/** One request; its status, or 0 when the connection failed (a server may close one whose body it refused). */
export function call(agent: Agent, port: number, req: FuzzRequest): Promise<number> {
  return new Promise((resolve) => {
    const r = request({ host: '127.0.0.1', port, method: req.method, path: req.path, agent, headers: req.headers }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
      res.once('error', () => resolve(res.statusCode ?? 0))
    })
    r.once('error', () => resolve(0))
    r.end(req.body)
  })
}

const json = { 'content-type': 'application/json' }

/** The fuzz suite's CRDs and seeds, created as on the in-process server. */
export async function seed(agent: Agent, port: number): Promise<void> {
  const { crds, seeds } = fuzzResources()
  for (const crd of crds) await call(agent, port, { method: 'POST', path: CRDS, headers: json, body: JSON.stringify(crd) })
  const deadline = Date.now() + 20_000
  while ((await call(agent, port, { method: 'GET', path: THINGS, headers: {} })) !== 200) {
    if (Date.now() > deadline) throw new Error('the fuzz resources were never served')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  for (const { collection, body } of seeds) {
    const status = await call(agent, port, { method: 'POST', path: collection, headers: json, body: JSON.stringify(body) })
    if (status !== 201) throw new Error(`seeding ${collection} answered ${status}`)
  }
}

/** Stops what a hostile-input run started, whichever of it did start: the admin agent, the GET client, the sender, the daemon, its directory. */
export async function tearDown(run: { agent?: Agent; client?: ChildProcess; sender?: ChildProcess; daemon?: ChildProcess; dir: string }): Promise<void> {
  run.agent?.destroy()
  for (const child of [run.client, run.sender]) {
    if (!child || child.exitCode !== null) continue
    child.stdin?.end()
    child.kill('SIGTERM')
  }
  if (run.daemon) await stopDaemon(run.daemon)
  await rm(run.dir, { recursive: true, force: true })
}

/** One GET as the client saw it: when it was sent and its latency (ms), and on Linux how long the client itself waited for a core meanwhile. */
export type GetSample = [sentAt: number, latency: number, clientWaitedForCore?: number]

/**
 * Where the processes of a daemon measurement run. `shared`: the daemon and
 * both clients on any core, at the same priority. `own-core`: the daemon on
 * core 0, both clients on core 1 and the hostile sender at the lowest
 * priority there, as if each were a machine of its own: on a machine of 2
 * cores the clients' own work (TLS for megabytes of hostile bodies) would
 * otherwise delay the GETs and the daemon alike. Linux only (taskset, nice).
 */
export type Layout = 'shared' | 'own-core'

/** Why the own-core layout cannot be used on this machine, if it cannot. */
export function ownCoreUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'it needs Linux'
  if (cpus().length < 2) return 'the machine has one core'
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
  } catch {
    return 'taskset (util-linux) is not installed'
  }
  return undefined
}

/** The command a client process is started with under `layout`: on core 1, and the sender at the lowest priority. */
function clientCommand(layout: Layout, who: 'gets' | 'sender', args: string[]): [string, string[]] {
  const node = [process.execPath, '--import', 'tsx', ...args]
  if (layout === 'shared') return [node[0]!, node.slice(1)]
  return ['taskset', ['-c', '1', ...(who === 'sender' ? ['nice', '-n', '19'] : []), ...node]]
}

/** A child process answering one JSON line per command on stdin. */
function lineProcess(command: [string, string[]]): { child: ChildProcess; ask<T>(value: unknown): Promise<T> } {
  const child = spawn(command[0], command[1], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return {
    child,
    async ask<T>(value: unknown): Promise<T> {
      child.stdin!.write(`${JSON.stringify(value)}\n`)
      const next = await lines.next()
      if (next.done) throw new Error(`${command[1].join(' ')} exited`)
      return JSON.parse(next.value as string) as T
    },
  }
}

/** The GET client process: `run(total)` resolves with its LoadResult. */
export function startGetClient(
  port: number,
  dir: string,
  layout: Layout = 'shared',
): { child: ChildProcess; run(total: number, samples?: boolean): Promise<LoadResult & { samples?: GetSample[] }> } {
  const script = join(import.meta.dirname, 'hostile-get-client.ts')
  const { child, ask } = lineProcess(clientCommand(layout, 'gets', [script, String(port), certDirIn(dir), `${CONFIGMAPS}/seed-0`]))
  return { child, run: (total, samples = false) => ask({ total, maxSeconds: 30, samples }) }
}

/** The hostile sender process (hostile-sender.ts). */
function startSender(port: number, dir: string, set: SenderSet, layout: Layout) {
  const script = join(import.meta.dirname, 'hostile-sender.ts')
  const { child, ask } = lineProcess(clientCommand(layout, 'sender', [script, String(port), certDirIn(dir), set]))
  return {
    child,
    warm: (passes: number) => ask<object>({ cmd: 'warm', passes }),
    start: () => ask<object>({ cmd: 'start' }),
    stop: async () => (await ask<{ sent: SentRequest[] }>({ cmd: 'stop' })).sent,
  }
}

const withoutSamples = ({ samples: _samples, ...result }: LoadResult & { samples?: GetSample[] }): LoadResult => result

/**
 * The GETs under attack slower than twice the idle p99, and how many of them
 * waited for a core in the client for over half their time: on a machine of
 * two cores the client shares them with the server and the hostile sender.
 */
function slowGets(idle: LoadResult, underAttack: LoadResult & { samples?: GetSample[] }): SlowGets {
  const overMs = 2 * idle.p99Ms
  const slow = (underAttack.samples ?? []).filter(([, latency]) => latency > overMs)
  const known = slow.every((sample) => sample[2] !== undefined)
  return { overMs, count: slow.length, clientWaiting: known ? slow.filter(([, latency, waited]) => waited! > latency / 2).length : undefined }
}

/**
 * Ordinary requests to send back to back instead of the worst inputs: the
 * same measurement with a busy but well-behaved second client, to tell what
 * any second client costs the GETs on this machine from what hostile input does.
 */
export function ordinaryInputs(): Array<{ name: string; request: FuzzRequest }> {
  const json = { 'content-type': 'application/json' }
  const create = (data: Record<string, string>) => JSON.stringify({ metadata: { name: 'seed-0' }, data })
  return [
    { name: 'GET of a ConfigMap', request: { method: 'GET', path: `${CONFIGMAPS}/seed-0`, headers: {} } },
    { name: 'LIST of the ConfigMaps', request: { method: 'GET', path: CONFIGMAPS, headers: {} } },
    { name: 'create of a small ConfigMap that exists (409)', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: create({ a: 'b' }) } },
    { name: 'create of a 100 KB ConfigMap that exists (409)', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: create({ a: 'x'.repeat(100_000) }) } },
  ]
}

/** p50 and p99 over every round's GETs at once, idle and under attack: a round's p99 alone rests on its 30 slowest GETs. */
export function pooled(rounds: Array<{ idle: number[]; underAttack: number[] }>): PooledFigures {
  const idle = rounds.flatMap((r) => r.idle).sort((a, b) => a - b)
  const underAttack = rounds.flatMap((r) => r.underAttack).sort((a, b) => a - b)
  return {
    idleP50Ms: percentile(idle, 50),
    idleP99Ms: percentile(idle, 99),
    underAttackP50Ms: percentile(underAttack, 50),
    underAttackP99Ms: percentile(underAttack, 99),
    gets: underAttack.length,
  }
}

export async function measureHostileDaemon(main: string, opts: { rounds: number; gets: number; set?: SenderSet; layout?: Layout }): Promise<HostileFigures> {
  const layout = opts.layout ?? 'shared'
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-hostile-'))
  let daemon: ChildProcess | undefined
  let client: ChildProcess | undefined
  let sender: ChildProcess | undefined
  let agent: Agent | undefined
  try {
    const { running } = await timedStart(main, dir)
    daemon = running.child
    // Every thread the daemon has and will make (a new thread takes its maker's cores).
    if (layout === 'own-core') execFileSync('taskset', ['-a', '-p', '-c', '0', String(daemon.pid)], { stdio: 'ignore' })
    agent = await adminAgent(dir)
    await seed(agent, running.port)
    const gets = startGetClient(running.port, dir, layout)
    client = gets.child
    const hostile = startSender(running.port, dir, opts.set ?? 'worst', layout)
    sender = hostile.child
    // Warm-up, unmeasured: the JIT on both ends, every hostile path twice, then GETs alone again. After
    // a shorter one (one pass, no GETs after it) the first round's idle p99 was 2 to 4 times the others'.
    await gets.run(2000)
    await hostile.warm(2)
    await gets.run(2000)

    const rounds: HostileRound[] = []
    const latencies: Array<{ idle: number[]; underAttack: number[] }> = []
    const sent: SentRequest[] = []
    for (let round = 0; round < opts.rounds; round++) {
      const idle = await gets.run(opts.gets, true)
      await hostile.start()
      const underAttack = await gets.run(opts.gets, true)
      sent.push(...(await hostile.stop()))
      rounds.push({ idle: withoutSamples(idle), underAttack: withoutSamples(underAttack), slow: slowGets(idle, underAttack) })
      latencies.push({ idle: idle.samples!.map(([, ms]) => ms), underAttack: underAttack.samples!.map(([, ms]) => ms) })
    }
    const names = [...new Set(sent.map(([name]) => name))]
    return {
      rounds,
      pooled: pooled(latencies),
      inputs: names.map((name) => {
        const mine = sent.filter(([n]) => n === name)
        return { name, status: mine.at(-1)![1], medianMs: median(mine.map(([, , ms]) => ms)), sent: mine.length }
      }),
    }
  } finally {
    await tearDown({ agent, client, sender, daemon, dir })
  }
}
