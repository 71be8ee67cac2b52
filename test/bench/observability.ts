/**
 * What auditing and tracing cost per request: the same GET of a ConfigMap
 * and the same create, on four servers — neither on; audit at Metadata
 * level to a log file in blocking mode; the same in batch mode; tracing at
 * full sampling (1,000,000 per million) exported over OTLP gRPC to a small
 * collector on loopback. The audit backends and the tracer are the daemon's
 * own (runtimes/node), built from the same flags and files. Rounds alternate
 * between the servers. Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/observability.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
// The built code (dist), as the daemon runs it: `npm run build` first.
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { parseCommandLine } from '../../dist/core/options/flags/index.js'
import { silentLogger } from '../../dist/core/logging/logger.js'
import { auditOptions } from '../../dist/runtimes/node/daemon/audit.js'
import { loadConfigFiles } from '../../dist/runtimes/node/daemon/config-files.js'
import { startNodeTracing } from '../../dist/runtimes/node/daemon/tracing.js'
import { startOtlpCollector } from '../integration/otlp-collector.js'
import { ms } from './format.js'
import { type LoadResult, median, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const CONFIGMAPS = 'http://in-process/api/v1/namespaces/default/configmaps'
const ROUNDS = 4
const PER_ROUND = { total: 1500, concurrency: 1, maxSeconds: 10 }
const SETUPS = ['neither', 'audit blocking', 'audit batch', 'tracing'] as const
type Setup = (typeof SETUPS)[number]
const POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n'

export interface ObservabilityFigures {
  gets: Record<Setup, LoadResult[]>
  creates: Record<Setup, LoadResult[]>
  loadAverage: number
}

/** The daemon's audit options for these flags and the Metadata policy. */
function audit(dir: string, mode: 'blocking' | 'batch') {
  const policy = join(dir, 'policy.yaml')
  writeFileSync(policy, POLICY)
  const command = parseCommandLine([`--audit-policy-file=${policy}`, `--audit-log-path=${join(dir, `audit-${mode}.log`)}`, `--audit-log-mode=${mode}`])
  if (command.action !== 'run') throw new Error(command.action)
  const files = loadConfigFiles(command.flags, silentLogger)
  return auditOptions(command.flags, files.auditPolicy, files.auditWebhook, silentLogger)
}

async function serverWith(options: Parameters<typeof createApiServer>[0], ports: Parameters<typeof createApiServer>[1] = {}): Promise<ApiServer> {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...options }, ports)
  await server.ready
  if (!(await create(server, 'settings'))) throw new Error('cannot create the ConfigMap')
  return server
}

async function create(server: ApiServer, name: string): Promise<boolean> {
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })
  const res = await server.fetch(new Request(CONFIGMAPS, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
  await res.arrayBuffer()
  return res.status === 201
}

async function get(server: ApiServer): Promise<boolean> {
  const res = await server.fetch(new Request(`${CONFIGMAPS}/settings`, { headers: { accept: 'application/json' } }))
  await res.arrayBuffer()
  return res.status === 200
}

export async function measureObservability(): Promise<ObservabilityFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-bench-observability-'))
  const collector = await startOtlpCollector()
  const tracing = startNodeTracing({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 })
  const blocking = audit(dir, 'blocking')
  const batch = audit(dir, 'batch')
  const servers: Record<Setup, ApiServer> = {
    neither: await serverWith({}),
    'audit blocking': await serverWith(blocking ? { audit: blocking } : {}),
    'audit batch': await serverWith(batch ? { audit: batch } : {}),
    tracing: await serverWith({}, { tracerProvider: tracing.tracerProvider }),
  }
  const empty = (): Record<Setup, LoadResult[]> => ({ neither: [], 'audit blocking': [], 'audit batch': [], tracing: [] })
  const figures: ObservabilityFigures = { gets: empty(), creates: empty(), loadAverage: 0 }
  let serial = 0
  for (const setup of SETUPS) await runLoad({ ...PER_ROUND, total: 500 }, () => get(servers[setup]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? SETUPS : [...SETUPS].reverse()
    for (const setup of order) {
      figures.gets[setup].push(await runLoad(PER_ROUND, () => get(servers[setup])))
      figures.creates[setup].push(await runLoad(PER_ROUND, () => create(servers[setup], `cm-${serial++}`)))
    }
  }
  figures.loadAverage = loadavg()[0] ?? 0
  for (const server of Object.values(servers)) await server.shutdown()
  await tracing.shutdown()
  await collector.close()
  rmSync(dir, { recursive: true, force: true })
  return figures
}

const BEGIN = '<!-- observability-cost: begin -->'
const END = '<!-- observability-cost: end -->'
const over = (rounds: readonly LoadResult[], figure: (r: LoadResult) => number): number => median(rounds.map(figure))
const signed = (percent: number): string => `${percent >= 0 ? '+' : ''}${percent.toFixed(0)}%`

export function renderObservabilitySection(f: ObservabilityFigures, date: Date): string {
  const table = (title: string, rows: Record<Setup, LoadResult[]>) => {
    const base = over(rows.neither, (x) => x.p50Ms)
    const lines = SETUPS.map((setup) => {
      const r = rows[setup]
      const p50 = over(r, (x) => x.p50Ms)
      const change = setup === 'neither' ? '' : signed((p50 / base - 1) * 100)
      return `| ${setup} | ${Math.round(over(r, (x) => x.perSecond)).toLocaleString('en-US')}/s | ${ms(p50)} | ${change} | ${ms(over(r, (x) => x.p99Ms))} | ${r.reduce((n, x) => n + x.count, 0)} |`
    })
    return `| ${title} | rate | p50 | p50 against neither | p99 | n |\n| --- | --- | --- | --- | --- | --- |\n${lines.join('\n')}`
  }
  return `${BEGIN}
## Audit and tracing cost per request (each against neither)

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/observability.ts\`.

One client, one request at a time, through \`server.fetch\` (in process,
memory storage), on four servers: neither auditing nor tracing; auditing with
a policy of one rule, \`level: Metadata\`, to a log file in \`blocking\` mode
(each event written before the answer) and in \`batch\` mode (buffered,
written in the background); tracing with \`samplingRatePerMillion: 1000000\`
(every request sampled), spans exported over OTLP gRPC to a collector on
loopback. Audit and tracing are built by the daemon's own code from the same
flags and files. ${ROUNDS} rounds alternate between the servers; the figures
are medians over rounds.

${table('GET one ConfigMap', f.gets)}

${table('create one ConfigMap', f.creates)}

Load average ${f.loadAverage.toFixed(1)} on this shared machine.
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = renderObservabilitySection(await measureObservability(), new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
