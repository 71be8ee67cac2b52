/**
 * Which hostile input slows the daemon's GETs. The built daemon over TLS,
 * GETs from a client process of their own (hostile-get-client.ts), the fuzz
 * suite's worst inputs from this process, as hostile-daemon.ts measures:
 *
 * - mixed: the inputs back to back, one at a time; every GET slower than
 *   SLOW_FACTOR × the idle p50 is charged to the input in flight when it was
 *   sent (both processes read the clock the machine shares), or to the one
 *   that started while it waited, or to none;
 * - alone: each input sent back to back by itself while GETS_ALONE GETs run,
 *   their p99 beside an idle p99 measured just before.
 *
 * Figures only. Run with `node --import tsx test/bench/hostile-attribution.ts
 * [--baseline <dir of an earlier build>] [--main <its main.cjs>] [--only <part
 * of an input's name>]` after `npm run build`; prints markdown tables, a
 * whole run rewrites its section of docs/benchmarks.md, and
 * HOSTILE_ATTRIBUTION_JSON=<file> keeps the figures. DAEMON_NODE_OPTIONS
 * go to the daemon only; EVENT_LOOP_PROBE_CPU_PROFILE=<file> has the probe
 * write the daemon's CPU profile there (with --only, under one input).
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import type { Agent } from 'node:https'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { worstInputs } from '../fuzz/worst-inputs.js'
import { timedStart } from './daemon.js'
import { ms } from './format.js'
import { renderAttributionSection, writeAttributionSection } from './hostile-attribution-section.js'
import { adminAgent, call, seed, startGetClient, tearDown } from './hostile-daemon.js'
import { median, percentile } from './load.js'
import { daemonMainOf } from './package-entry.js'

const SLOW_FACTOR = 3
const GETS_MIXED = 3000
const GETS_ALONE = 400
const NONE = '(no hostile input in flight)'

const now = (): number => performance.timeOrigin + performance.now()

interface Interval {
  name: string
  start: number
  end: number
}

export interface Attribution {
  idleP50Ms: number
  idleP99Ms: number
  mixedP99Ms: number
  /** The daemon's event-loop delay while idle GETs ran, and under the mixed attack. */
  idleLoop: LoopDelay
  mixedLoop: LoopDelay
  /** Per input: the slow GETs charged to it, their median and max latency. */
  slow: Array<{ name: string; count: number; medianMs: number; maxMs: number; inFlightS: number }>
  slowTotal: number
  getsMixed: number
  /** Per input sent alone: GET p99 under it, the idle p99 just before, and how many of the input were answered. */
  alone: Array<{ name: string; idleP99Ms: number; p50Ms: number; p99Ms: number; maxMs: number; sent: number; gets: number; loop: LoopDelay; idleLoop: LoopDelay }>
  loadAverage: number
}

/** The input whose interval holds `at`, else the first that started in [at, at + latency], else NONE. */
function chargedTo(intervals: readonly Interval[], at: number, latency: number): string {
  for (const i of intervals) if (i.start <= at && at <= i.end) return i.name
  for (const i of intervals) if (i.start > at && i.start <= at + latency) return i.name
  return NONE
}

/** Sends `inputs` round-robin until `stop()` is called; the intervals each was in flight. */
function attack(agent: Agent, port: number, inputs: ReturnType<typeof worstInputs>): { answered(): number; stop(): Promise<Interval[]> } {
  const intervals: Interval[] = []
  let attacking = true
  let sent = 0
  const loop = (async () => {
    while (attacking) {
      const { name, request } = inputs[sent++ % inputs.length]!
      const start = now()
      await call(agent, port, request)
      intervals.push({ name, start, end: now() })
    }
  })()
  return {
    answered: () => intervals.length,
    async stop() {
      attacking = false
      await loop
      return intervals
    },
  }
}

/** Seconds `name` was in flight over the run. */
const inFlight = (intervals: readonly Interval[], name: string): number => intervals.filter((i) => i.name === name).reduce((s, i) => s + i.end - i.start, 0) / 1000

/** At least this many answers to an input sent alone, GETS_ALONE GETs at a time, within ALONE_SECONDS. */
const ALONE_ANSWERS = 3
const ALONE_SECONDS = 20

/** The daemon's event-loop delay over a phase, from event-loop-probe.mjs. */
interface LoopDelay {
  p50Ms: number
  p99Ms: number
  maxMs: number
}

/** Starts the daemon with the probe loaded; `read()` answers the delay since the last read. */
async function startProbed(main: string, dir: string): Promise<{ child: ChildProcess; port: number; read(): Promise<LoopDelay> }> {
  const file = join(dir, 'event-loop.json')
  const saved = { options: process.env['NODE_OPTIONS'], file: process.env['EVENT_LOOP_PROBE_FILE'] }
  process.env['NODE_OPTIONS'] = `${saved.options ?? ''} ${process.env['DAEMON_NODE_OPTIONS'] ?? ''} --import ${join(import.meta.dirname, 'event-loop-probe.mjs')}`
  process.env['EVENT_LOOP_PROBE_FILE'] = file
  try {
    const { running } = await timedStart(main, dir)
    let seq = 0
    const read = async (): Promise<LoopDelay> => {
      running.child.kill('SIGUSR2')
      const until = Date.now() + 5000
      while (Date.now() < until) {
        const text = await readFile(file, 'utf8').catch(() => '')
        const figures = text ? (JSON.parse(text) as LoopDelay & { seq: number }) : undefined
        if (figures && figures.seq > seq) {
          seq = figures.seq
          return figures
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error('the daemon never wrote its event-loop delay')
    }
    await read()
    return { child: running.child, port: running.port, read }
  } finally {
    for (const [name, value] of [['NODE_OPTIONS', saved.options], ['EVENT_LOOP_PROBE_FILE', saved.file]] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b)

/** `only`: the mixed attack is skipped, and only the inputs whose name contains it are sent alone. */
export async function attributeSlowGets(main: string, only?: string): Promise<Attribution> {
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-attribution-'))
  let daemon: ChildProcess | undefined
  let client: ChildProcess | undefined
  let agent: Agent | undefined
  try {
    const running = await startProbed(main, dir)
    daemon = running.child
    agent = await adminAgent(dir)
    await seed(agent, running.port)
    const gets = startGetClient(running.port, dir)
    client = gets.child
    // Bodies as bytes once, so that the sender does not encode megabytes of text on every send.
    const inputs = worstInputs().map(({ name, request }) => ({ name, request: typeof request.body === 'string' ? { ...request, body: Buffer.from(request.body) } : request }))
    await gets.run(1000)
    for (const { request } of inputs) await call(agent, running.port, request)

    await running.read()
    const mixedGets = only === undefined ? GETS_MIXED : 1
    const idle = await gets.run(mixedGets, true)
    const idleLoop = await running.read()
    const slowFrom = SLOW_FACTOR * idle.p50Ms
    const attacker = attack(agent, running.port, inputs)
    const mixed = await gets.run(mixedGets, true)
    const intervals = await attacker.stop()
    const mixedLoop = await running.read()
    const byInput = new Map<string, number[]>()
    for (const [at, latency] of mixed.samples ?? []) {
      if (latency <= slowFrom) continue
      const name = chargedTo(intervals, at, latency)
      byInput.set(name, [...(byInput.get(name) ?? []), latency])
    }
    const slow = [...byInput]
      .map(([name, l]) => ({ name, count: l.length, medianMs: median(l), maxMs: Math.max(...l), inFlightS: inFlight(intervals, name) }))
      .sort((a, b) => b.count - a.count)

    const alone: Attribution['alone'] = []
    for (const input of inputs) {
      if (only !== undefined && !input.name.includes(only)) continue
      const before = await gets.run(GETS_ALONE)
      const idleLoop = await running.read()
      const attackerAlone = attack(agent, running.port, [input])
      // A slow input (20000 keys of YAML take seconds) is answered a few times, however many GETs that takes.
      const latencies: number[] = []
      const until = Date.now() + ALONE_SECONDS * 1000
      do {
        const under = await gets.run(GETS_ALONE, true)
        latencies.push(...(under.samples ?? []).map(([, latency]) => latency))
      } while (attackerAlone.answered() < ALONE_ANSWERS && Date.now() < until)
      const sent = (await attackerAlone.stop()).length
      const loop = await running.read()
      const l = sorted(latencies)
      alone.push({ name: input.name, idleP99Ms: before.p99Ms, p50Ms: percentile(l, 50), p99Ms: percentile(l, 99), maxMs: l.at(-1) ?? Number.NaN, sent, gets: l.length, loop, idleLoop })
    }
    return {
      idleP50Ms: idle.p50Ms,
      idleP99Ms: idle.p99Ms,
      mixedP99Ms: mixed.p99Ms,
      idleLoop,
      mixedLoop,
      slow,
      slowTotal: slow.reduce((n, s) => n + s.count, 0),
      getsMixed: mixed.count,
      alone,
      loadAverage: loadavg()[0]!,
    }
  } finally {
    await tearDown({ agent, client, daemon, dir })
  }
}

export function renderAttribution(a: Attribution): string {
  const slowRows = a.slow.map((s) => `| ${s.name} | ${s.count} | ${s.inFlightS.toFixed(1)} s | ${s.inFlightS > 0 ? (s.count / s.inFlightS).toFixed(0) : '-'} | ${ms(s.medianMs)} | ${ms(s.maxMs)} |`)
  const aloneRows = a.alone.map((s) => `| ${s.name} | ${s.sent} | ${ms(s.idleP99Ms)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${(s.p99Ms / s.idleP99Ms).toFixed(1)}× | ${ms(s.maxMs)} | ${ms(s.idleLoop.maxMs)} | ${ms(s.loop.p99Ms)} | ${ms(s.loop.maxMs)} |`)
  return [
    `Idle: GET p50 ${ms(a.idleP50Ms)}, p99 ${ms(a.idleP99Ms)}, the daemon's event-loop delay p99 ${ms(a.idleLoop.p99Ms)}, max ${ms(a.idleLoop.maxMs)}; under the mixed attack GET p99 ${ms(a.mixedP99Ms)}, event-loop delay p99 ${ms(a.mixedLoop.p99Ms)}, max ${ms(a.mixedLoop.maxMs)}; ${a.slowTotal} of ${a.getsMixed} GETs slower than ${SLOW_FACTOR}× the idle p50 (load average ${a.loadAverage.toFixed(1)}).`,
    '',
    `| in flight when a slow GET was sent | slow GETs | time in flight | slow GETs per second in flight | median | max |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...slowRows,
    '',
    `| input sent alone, back to back | sent | idle p99 just before | GET p50 | GET p99 | p99 ratio | GET max | daemon's loop delay max, idle | loop delay p99 under it | loop delay max under it |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...aloneRows,
    '',
  ].join('\n')
}

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1] : undefined
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `--baseline <dir>`: a checkout of an earlier commit with its dist/ built, measured after this one;
  // a whole run (no --only) then rewrites the hostile-attribution section of docs/benchmarks.md.
  const root = join(import.meta.dirname, '..', '..')
  const main = arg('--main') ?? daemonMainOf(root)
  const only = arg('--only')
  const baseline = arg('--baseline')
  const a = await attributeSlowGets(main, only)
  process.stdout.write(renderAttribution(a))
  const base = baseline ? await attributeSlowGets(daemonMainOf(baseline), only) : undefined
  if (base) process.stdout.write(`\nBaseline:\n${renderAttribution(base)}`)
  if (process.env['HOSTILE_ATTRIBUTION_JSON']) await writeFile(process.env['HOSTILE_ATTRIBUTION_JSON'], JSON.stringify({ a, base }))
  if (only === undefined) await writeAttributionSection(root, renderAttributionSection(a, base, new Date()))
  process.exit(0)
}
