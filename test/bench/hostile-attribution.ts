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
 * [--main <dist/runtimes/node/main.js of a build>]` after `npm run build`;
 * prints markdown tables, and HOSTILE_ATTRIBUTION_JSON=<file> keeps the figures.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { Agent } from 'node:https'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { worstInputs } from '../fuzz/worst-inputs.js'
import { stopDaemon, timedStart } from './daemon.js'
import { ms } from './format.js'
import { adminAgent, call, seed, startGetClient } from './hostile-daemon.js'
import { median, percentile } from './load.js'

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
  /** Per input: the slow GETs charged to it, their median and max latency. */
  slow: Array<{ name: string; count: number; medianMs: number; maxMs: number; inFlightS: number }>
  slowTotal: number
  getsMixed: number
  /** Per input sent alone: GET p99 under it, the idle p99 just before, and how many of the input were answered. */
  alone: Array<{ name: string; idleP99Ms: number; p50Ms: number; p99Ms: number; maxMs: number; sent: number; gets: number }>
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

const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b)

export async function attributeSlowGets(main: string): Promise<Attribution> {
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-attribution-'))
  let daemon: ChildProcess | undefined
  let client: ChildProcess | undefined
  let agent: Agent | undefined
  try {
    const { running } = await timedStart(main, dir)
    daemon = running.child
    agent = await adminAgent(dir)
    await seed(agent, running.port)
    const gets = startGetClient(running.port, dir)
    client = gets.child
    const inputs = worstInputs()
    await gets.run(1000)
    for (const { request } of inputs) await call(agent, running.port, request)

    const idle = await gets.run(GETS_MIXED, true)
    const slowFrom = SLOW_FACTOR * idle.p50Ms
    const attacker = attack(agent, running.port, inputs)
    const mixed = await gets.run(GETS_MIXED, true)
    const intervals = await attacker.stop()
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
      const before = await gets.run(GETS_ALONE)
      const attackerAlone = attack(agent, running.port, [input])
      // A slow input (20000 keys of YAML take seconds) is answered a few times, however many GETs that takes.
      const latencies: number[] = []
      const until = Date.now() + ALONE_SECONDS * 1000
      do {
        const under = await gets.run(GETS_ALONE, true)
        latencies.push(...(under.samples ?? []).map(([, latency]) => latency))
      } while (attackerAlone.answered() < ALONE_ANSWERS && Date.now() < until)
      const sent = (await attackerAlone.stop()).length
      const l = sorted(latencies)
      alone.push({ name: input.name, idleP99Ms: before.p99Ms, p50Ms: percentile(l, 50), p99Ms: percentile(l, 99), maxMs: l.at(-1) ?? Number.NaN, sent, gets: l.length })
    }
    return {
      idleP50Ms: idle.p50Ms,
      idleP99Ms: idle.p99Ms,
      mixedP99Ms: mixed.p99Ms,
      slow,
      slowTotal: slow.reduce((n, s) => n + s.count, 0),
      getsMixed: mixed.count,
      alone,
      loadAverage: loadavg()[0]!,
    }
  } finally {
    agent?.destroy()
    if (client && client.exitCode === null) {
      client.stdin?.end()
      client.kill('SIGTERM')
    }
    if (daemon) await stopDaemon(daemon)
    await rm(dir, { recursive: true, force: true })
  }
}

export function renderAttribution(a: Attribution): string {
  const slowRows = a.slow.map((s) => `| ${s.name} | ${s.count} | ${s.inFlightS.toFixed(1)} s | ${s.inFlightS > 0 ? (s.count / s.inFlightS).toFixed(0) : '-'} | ${ms(s.medianMs)} | ${ms(s.maxMs)} |`)
  const aloneRows = a.alone.map((s) => `| ${s.name} | ${s.sent} | ${ms(s.idleP99Ms)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${(s.p99Ms / s.idleP99Ms).toFixed(1)}× | ${ms(s.maxMs)} |`)
  return [
    `Idle: p50 ${ms(a.idleP50Ms)}, p99 ${ms(a.idleP99Ms)}; under the mixed attack p99 ${ms(a.mixedP99Ms)}; ${a.slowTotal} of ${a.getsMixed} GETs slower than ${SLOW_FACTOR}× the idle p50 (load average ${a.loadAverage.toFixed(1)}).`,
    '',
    `| in flight when a slow GET was sent | slow GETs | time in flight | slow GETs per second in flight | median | max |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...slowRows,
    '',
    `| input sent alone, back to back | sent | idle p99 just before | GET p50 | GET p99 | p99 ratio | GET max |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...aloneRows,
    '',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--main')
  const main = at > 0 ? process.argv[at + 1]! : join(import.meta.dirname, '..', '..', 'dist', 'runtimes', 'node', 'main.js')
  const a = await attributeSlowGets(main)
  if (process.env['HOSTILE_ATTRIBUTION_JSON']) await writeFile(process.env['HOSTILE_ATTRIBUTION_JSON'], JSON.stringify(a))
  process.stdout.write(renderAttribution(a))
  process.exit(0)
}
