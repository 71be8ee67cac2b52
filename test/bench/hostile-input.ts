/**
 * GET latency from one client while another sends the fuzz suite's worst
 * inputs (test/fuzz/worst-inputs.ts), beside the same client's latency on an
 * idle server, in one run. Figures only: nothing passes or fails.
 *
 * Run alone with `node --import tsx test/bench/hostile-input.ts`: it
 * rewrites its own section of docs/benchmarks.md (between the markers) and
 * leaves the rest of the page as the last full run wrote it.
 */
import { join } from 'node:path'
import type { ApiServer } from '../../core/index.js'
import { fuzzServer, send } from '../fuzz/fuzz-server.js'
import { CONFIGMAPS, type FuzzRequest, worstInputs } from '../fuzz/worst-inputs.js'
import { ms, ratio } from './format.js'
import { type LoadResult, median, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

export interface HostileFigures {
  idle: LoadResult
  underAttack: LoadResult
  /** Each worst input: its status and how long the server took to answer it (median). */
  inputs: Array<{ name: string; status: number; medianMs: number; sent: number }>
}

const GET: FuzzRequest = { method: 'GET', path: `${CONFIGMAPS}/seed-0`, headers: { accept: 'application/json' } }
const GETS = { total: 4000, concurrency: 1, maxSeconds: 20 }

/**
 * Each GET arrives as a request on a socket does, in an event-loop turn of
 * its own (setImmediate), and its time counts from then: it waits for
 * whatever holds the thread at that moment. A loop of GETs chained by
 * promises alone would instead run ahead of any request that yields to the
 * event loop, and never wait for it.
 */
async function getLoop(server: ApiServer): Promise<LoadResult> {
  return runLoad(GETS, async () => {
    await new Promise((resolve) => setImmediate(resolve))
    return (await send(server, GET)).status === 200
  })
}

export async function measureHostileInput(): Promise<HostileFigures> {
  const server = await fuzzServer()
  const inputs = worstInputs()
  // Warm-up, unmeasured: the JIT and every hostile path once.
  await runLoad({ total: 2000, concurrency: 1, maxSeconds: 10 }, async () => (await send(server, GET)).status === 200)
  for (const { request } of inputs) await send(server, request)

  const idle = await getLoop(server)

  const times = new Map<string, { status: number; ms: number[] }>(inputs.map(({ name }) => [name, { status: 0, ms: [] }]))
  let attacking = true
  const attacker = (async () => {
    for (let i = 0; attacking; i++) {
      const { name, request } = inputs[i % inputs.length]!
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
  await server.shutdown()
  return {
    idle,
    underAttack,
    inputs: inputs.map(({ name }) => {
      const record = times.get(name)!
      return { name, status: record.status, medianMs: median(record.ms), sent: record.ms.length }
    }),
  }
}

const BEGIN = '<!-- hostile-input: begin -->'
const END = '<!-- hostile-input: end -->'

export function renderHostileSection(f: HostileFigures, date: Date): string {
  const row = (what: string, r: LoadResult) => `| ${what} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${r.count} |`
  return `${BEGIN}
## GET latency under hostile input

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/hostile-input.ts\`.

One client GETs a ConfigMap, one request at a time, through \`server.fetch\`
(in process, memory storage), each GET arriving in an event-loop turn of its
own and timed from then, as a request read from a socket. First alone, then while a second client sends
the fuzz suite's worst inputs (\`test/fuzz/worst-inputs.ts\`) back to back,
one at a time. The goal is a p99 under 2× its idle value.

| GET one ConfigMap | p50 | p99 | n |
| --- | --- | --- | --- |
${row('idle server', f.idle)}
${row('while the worst inputs are sent', f.underAttack)}

p99 under hostile input is **${ratio(f.underAttack.p99Ms, f.idle.p99Ms)}** the idle p99 (p50 ${ratio(f.underAttack.p50Ms, f.idle.p50Ms)}).

| worst input | answer | server time (median) | sent |
| --- | --- | --- | --- |
${f.inputs.map((i) => `| ${i.name} | ${i.status} | ${ms(i.medianMs)} | ${i.sent} |`).join('\n')}

The server runs on one JavaScript thread: a GET that arrives while a hostile
request holds it waits. The slowest inputs, ${slowest(f)}, are bounded by
limits proportional to the 3 MiB body limit and are worked in slices: the
YAML lexer, parser and composer, and JSON patch copies, yield to the event
loop once they have held it 2 ms, so a GET waits for one slice, not the
whole request. What still runs in one piece: selectors (parsed whole, about
a hundred milliseconds for 20000 terms), \`JSON.parse\` of a body, and the
size check of a JSON patch copy; a GET that arrives during one of them waits
for it. Refusals by a limit (size, depth, aliases, operation count) cost a
few milliseconds.
${END}
`
}

/** The two inputs that took longest, with their times. */
function slowest(f: HostileFigures): string {
  return [...f.inputs]
    .sort((a, b) => b.medianMs - a.medianMs)
    .slice(0, 2)
    .map((i) => `${i.name} (${ms(i.medianMs)})`)
    .join(' and ')
}

/** Puts the section into docs/benchmarks.md in place of its previous version, or at the end. */
export async function writeHostileSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureHostileInput()
  const section = renderHostileSection(figures, new Date())
  await writeHostileSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
