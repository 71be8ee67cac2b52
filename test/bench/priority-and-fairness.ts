/**
 * What API Priority and Fairness costs per request: the same GET of a
 * ConfigMap by the same token user on a server with priority and fairness
 * on (upstream's configuration, classified to global-default, a seat taken
 * and given back) and on one with it off (max-in-flight pools). Rounds
 * alternate between the two servers. Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/priority-and-fairness.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
// The built code (dist), as the daemon runs it: `npm run build` first.
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { ms } from './format.js'
import { type LoadResult, median, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const CONFIGMAP = 'http://in-process/api/v1/namespaces/default/configmaps/settings'
const TOKEN = 'bench-token'
const ROUNDS = 6
const PER_ROUND = { total: 3000, concurrency: 1, maxSeconds: 10 }

export interface FlowControlFigures {
  on: LoadResult[]
  off: LoadResult[]
  loadAverage: number
}

async function serverWith(priorityAndFairness: boolean): Promise<ApiServer> {
  const server = createApiServer({
    serving: { priorityAndFairness },
    authentication: { tokens: [{ token: TOKEN, user: { username: 'bench', groups: ['dev'] } }] },
    embeddedIdentity: ADMIN_IDENTITY,
  })
  await server.ready
  const res = await server.fetch(
    new Request('http://in-process/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'settings' }, data: { a: 'b' } }),
    }),
  )
  if (res.status !== 201) throw new Error(`cannot create the ConfigMap: ${res.status}`)
  return server
}

async function get(server: ApiServer): Promise<boolean> {
  const res = await server.fetch(new Request(CONFIGMAP, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } }), {})
  await res.arrayBuffer()
  return res.status === 200
}

export async function measureFlowControl(): Promise<FlowControlFigures> {
  const on = await serverWith(true)
  const off = await serverWith(false)
  for (const server of [on, off]) await runLoad(PER_ROUND, () => get(server))
  const figures: FlowControlFigures = { on: [], off: [], loadAverage: 0 }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)
    for (const which of order) figures[which].push(await runLoad(PER_ROUND, () => get(which === 'on' ? on : off)))
  }
  await on.shutdown()
  await off.shutdown()
  figures.loadAverage = loadavg()[0] ?? 0
  return figures
}

const BEGIN = '<!-- priority-and-fairness-cost: begin -->'
const END = '<!-- priority-and-fairness-cost: end -->'
const signed = (percent: number): string => `${percent >= 0 ? '+' : ''}${percent.toFixed(1)}%`
const over = (rounds: readonly LoadResult[], figure: (r: LoadResult) => number): number => median(rounds.map(figure))

export function renderFlowControlSection(f: FlowControlFigures, date: Date): string {
  const row = (what: string, r: readonly LoadResult[]) =>
    `| ${what} | ${Math.round(over(r, (x) => x.perSecond)).toLocaleString('en-US')}/s | ${ms(over(r, (x) => x.p50Ms))} | ${ms(over(r, (x) => x.p99Ms))} | ${r.reduce((n, x) => n + x.count, 0)} |`
  const cost = (over(f.on, (x) => x.p50Ms) / over(f.off, (x) => x.p50Ms) - 1) * 100
  const perRound = f.on.map((r, i) => (r.p50Ms / (f.off[i]?.p50Ms ?? r.p50Ms) - 1) * 100)
  return `${BEGIN}
## Priority and fairness cost per request (on against off)

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/priority-and-fairness.ts\`.

One client GETs a ConfigMap with a bearer token, one request at a time,
through \`server.fetch\` (in process, memory storage): once with priority and
fairness on (upstream's FlowSchemas; the request is classified to
\`global-default\` and takes one of its seats), once with it off (the
max-in-flight pools). ${ROUNDS} rounds alternate between the two servers; the
figures are medians over rounds. The goal is under 5% on a GET.

| GET one ConfigMap | rate | p50 | p99 | n |
| --- | --- | --- | --- | --- |
${row('priority and fairness off', f.off)}
${row('priority and fairness on', f.on)}

Priority and fairness changes the p50 latency by **${signed(cost)}**; round by
round the difference ranged from ${signed(Math.min(...perRound))} to ${signed(Math.max(...perRound))} (load average
${f.loadAverage.toFixed(1)} on this shared machine).
${END}
`
}

/** Puts the section into docs/benchmarks.md in place of its previous version, or at the end. */
export async function writeFlowControlSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = renderFlowControlSection(await measureFlowControl(), new Date())
  await writeFlowControlSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
