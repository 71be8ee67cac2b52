/**
 * GET latency from one client while another sends the fuzz suite's worst
 * inputs (test/fuzz/worst-inputs.ts), beside the same client's latency on an
 * idle server, in one run: in process through server.fetch, and against the
 * built daemon over TLS from a client process of its own
 * (hostile-daemon.ts; `npm run build` first). Figures only: nothing passes
 * or fails.
 *
 * Run alone with `node --import tsx test/bench/hostile-input.ts [--baseline
 * <dir>]`: it rewrites its own section of docs/benchmarks.md (between the
 * markers, hostile-section.ts) and leaves the rest of the page as the last
 * full run wrote it. HOSTILE_REPORT_JSON=<file> keeps the figures too.
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { ApiServer, ServerPorts } from '../../core/index.js'
import { nodeYamlDecoder } from '../../runtimes/node/daemon/yaml-decoder.js'
import { type Layout, measureHostileDaemon, ownCoreUnavailable, pooled } from './hostile-daemon.js'
import { fuzzServer, send } from '../fuzz/fuzz-server.js'
import { CONFIGMAPS, type FuzzRequest, worstInputs } from '../fuzz/worst-inputs.js'
import { type LoadResult, median, runLoad } from './load.js'
import { renderHostileSection, writeHostileSection } from './hostile-section.js'
import { daemonMainOf } from './package-entry.js'

export { renderHostileSection, writeHostileSection }

export interface HostileRound {
  idle: LoadResult
  underAttack: LoadResult
  /** From the daemon's GET client: the GETs under attack slower than twice the idle p99. */
  slow?: SlowGets
}

export interface SlowGets {
  /** Twice the round's idle p99 (ms). */
  overMs: number
  count: number
  /** Of them, those whose client waited for a core over half their time (Linux only). */
  clientWaiting: number | undefined
}

/** The cost of slicing to requests that are large but ordinary: each one's server time, alone (median). */
export interface OrdinaryFigure {
  name: string
  status: number
  medianMs: number
  sent: number
}

export interface HostileReport {
  /** In process with the Node runtime's YAML decoder (a worker thread), as the daemon runs. */
  inProcess: HostileFigures
  /** In process with YAML decoded on the serving thread (the default of createApiServer without the port). */
  inProcessHere: HostileFigures
  /** The daemon on a core of its own (the goal's measurement), or sharing the cores where that cannot be arranged. */
  daemon: HostileFigures
  daemonLayout: Layout
  /** Why the daemon could not have a core of its own, when it could not. */
  ownCoreUnavailable?: string | undefined
  /** The daemon with ordinary requests sent back to back instead of the worst inputs. */
  daemonOrdinary?: HostileFigures | undefined
  /** The daemon built from an earlier commit (`--baseline <dir>`), measured in the same run. */
  daemonBaseline?: HostileFigures | undefined
  /** The daemon sharing both cores with its two clients, as the measurement ran before it had a core of its own. */
  daemonShared?: HostileFigures | undefined
  ordinary: OrdinaryFigure[]
  ordinaryHere: OrdinaryFigure[]
  /** The machine's one-minute load average when the measurement ended. */
  loadAverage?: number
}

/** Percentiles over every round's GETs at once. */
export interface PooledFigures {
  idleP50Ms: number
  idleP99Ms: number
  underAttackP50Ms: number
  underAttackP99Ms: number
  /** GETs under attack, all rounds. */
  gets: number
}

export interface HostileFigures {
  /** Idle then under attack, several times: the machine's own load changes from one minute to the next. */
  rounds: HostileRound[]
  /** The rounds' GETs together: the figures the goal is judged on. */
  pooled: PooledFigures
  /** Each worst input: its status and how long the server took to answer it (median). */
  inputs: Array<{ name: string; status: number; medianMs: number; sent: number }>
}

const GET: FuzzRequest = { method: 'GET', path: `${CONFIGMAPS}/seed-0`, headers: { accept: 'application/json' } }
const GETS = { total: 3000, concurrency: 1, maxSeconds: 20 }
const ROUNDS = 3
/**
 * Against the daemon, 3000 GETs a round (each round under attack lasts long
 * enough for the hostile inputs to come round a few times) and 6 rounds: with
 * 1500 and 3, the p99 moved with which inputs a round happened to catch.
 */
const DAEMON_GETS = 3000
const DAEMON_ROUNDS = 6

/**
 * Each GET arrives as a request on a socket does, in an event-loop turn of
 * its own (setImmediate), and its time counts from then: it waits for
 * whatever holds the thread at that moment. A loop of GETs chained by
 * promises alone would instead run ahead of any request that yields to the
 * event loop, and never wait for it.
 */
async function getLoop(server: ApiServer): Promise<LoadResult & { latencies?: number[] }> {
  return runLoad({ ...GETS, keepLatencies: true }, async () => {
    await new Promise((resolve) => setImmediate(resolve))
    return (await send(server, GET)).status === 200
  })
}

async function measureInProcess(ports: Partial<ServerPorts>): Promise<{ figures: HostileFigures; ordinary: OrdinaryFigure[] }> {
  const server = await fuzzServer(ports)
  const inputs = worstInputs()
  // Warm-up, unmeasured: the JIT and every hostile path once.
  await runLoad({ total: 2000, concurrency: 1, maxSeconds: 10 }, async () => (await send(server, GET)).status === 200)
  for (const { request } of inputs) await send(server, request)

  const times = new Map<string, { status: number; ms: number[] }>(inputs.map(({ name }) => [name, { status: 0, ms: [] }]))
  const rounds: HostileRound[] = []
  const latencies: Array<{ idle: number[]; underAttack: number[] }> = []
  let sent = 0
  for (let round = 0; round < ROUNDS; round++) {
    const idle = await getLoop(server)
    let attacking = true
    const attacker = (async () => {
      while (attacking) {
        const { name, request } = inputs[sent++ % inputs.length]!
        const t0 = performance.now()
        const answer = await send(server, request)
        const record = times.get(name)!
        record.status = answer.status
        record.ms.push(performance.now() - t0)
      }
    })()
    const underAttack = await getLoop(server)
    attacking = false
    await attacker
    const { latencies: idleLatencies, ...idleResult } = idle
    const { latencies: underAttackLatencies, ...underAttackResult } = underAttack
    rounds.push({ idle: idleResult, underAttack: underAttackResult })
    latencies.push({ idle: idleLatencies!, underAttack: underAttackLatencies! })
  }
  const ordinary = await measureOrdinary(server)
  await server.shutdown()
  const figures = {
    rounds,
    pooled: pooled(latencies),
    inputs: inputs.map(({ name }) => {
      const record = times.get(name)!
      return { name, status: record.status, medianMs: median(record.ms), sent: record.ms.length }
    }),
  }
  return { figures, ordinary }
}

const MiB = 1024 * 1024

/** Large requests a user may well send, above the size from which bodies are decoded in slices. */
function ordinaryRequests(i: number): Array<{ name: string; request: FuzzRequest }> {
  const data = Object.fromEntries(Array.from({ length: 1024 }, (_, k) => [`key-${k}`, 'v'.repeat(1000)]))
  const yamlLines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ordinary-yaml-${i}`, 'data:']
  for (let k = 0; k < 2000; k++) yamlLines.push(`  key-${k}: value ${k}`)
  return [
    {
      name: 'create a 1 MiB ConfigMap (JSON, 1024 keys)',
      request: { method: 'POST', path: CONFIGMAPS, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: `ordinary-json-${i}` }, data }) },
    },
    {
      name: 'create a ConfigMap of 2000 keys in YAML',
      request: { method: 'POST', path: CONFIGMAPS, headers: { 'content-type': 'application/yaml' }, body: `${yamlLines.join('\n')}\n` },
    },
  ]
}

/** Each ordinary request sent alone a few times (and its object deleted), its server time. */
async function measureOrdinary(server: ApiServer): Promise<OrdinaryFigure[]> {
  const times = new Map<string, { status: number; ms: number[] }>()
  for (let i = 0; i < 12; i++) {
    for (const { name, request } of ordinaryRequests(i)) {
      if ((request.body?.length ?? 0) > 3 * MiB) throw new Error(`${name} is over the body limit`)
      const t0 = performance.now()
      const answer = await send(server, request)
      const elapsed = performance.now() - t0
      const record = times.get(name) ?? { status: 0, ms: [] }
      record.status = answer.status
      // The first two warm the JIT up.
      if (i >= 2) record.ms.push(elapsed)
      times.set(name, record)
    }
  }
  return [...times].map(([name, r]) => ({ name, status: r.status, medianMs: median(r.ms), sent: r.ms.length }))
}


/**
 * In process with each YAML decoder, then the built daemon at `root`, and
 * the one built at `baseline` when given: side by side in one run, on the
 * machine's load of the moment. The daemon has a core of its own where the
 * machine allows (`own-core` in hostile-daemon.ts), and is measured sharing
 * the cores with its clients as well.
 */
export async function measureHostileInput(root = join(import.meta.dirname, '..', '..'), baseline?: string): Promise<HostileReport> {
  const yamlDecoder = nodeYamlDecoder()
  const worker = await measureInProcess({ yamlDecoder })
  await yamlDecoder.close()
  const here = await measureInProcess({})
  const unavailable = ownCoreUnavailable()
  const layout: Layout = unavailable ? 'shared' : 'own-core'
  const daemonRun = (dir: string, extra: { set?: 'ordinary'; layout?: Layout } = {}) =>
    measureHostileDaemon(daemonMainOf(dir), { rounds: DAEMON_ROUNDS, gets: DAEMON_GETS, layout, ...extra })
  const daemon = await daemonRun(root)
  const daemonOrdinary = await daemonRun(root, { set: 'ordinary' })
  const daemonBaseline = baseline ? await daemonRun(baseline) : undefined
  const daemonShared = layout === 'own-core' ? await daemonRun(root, { layout: 'shared' }) : undefined
  return {
    inProcess: worker.figures,
    inProcessHere: here.figures,
    daemon,
    daemonLayout: layout,
    ownCoreUnavailable: unavailable,
    daemonOrdinary,
    daemonBaseline,
    daemonShared,
    ordinary: worker.ordinary,
    ordinaryHere: here.ordinary,
    loadAverage: loadavg()[0]!,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `--baseline <dir>`: a checkout of an earlier commit with its dist/ built, measured beside this one.
  const at = process.argv.indexOf('--baseline')
  const report = await measureHostileInput(undefined, at > 0 ? process.argv[at + 1] : undefined)
  if (process.env['HOSTILE_REPORT_JSON']) await writeFile(process.env['HOSTILE_REPORT_JSON'], JSON.stringify(report))
  const section = renderHostileSection(report, new Date())
  await writeHostileSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
