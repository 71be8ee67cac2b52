/**
 * The reads clients make besides a GET of one object, as the server's CPU
 * per answer: the discovery documents kubectl reads before its commands and
 * REST mappers read per group version, the OpenAPI documents kubectl's
 * validation and `explain` read, `/version`, a LIST as a Table (`kubectl
 * get`), as protobuf (for a client that accepts nothing else) and as JSON,
 * and an answer indented for curl. wrk (one thread, 8 connections, the
 * bearer token) against a daemon on its embedded store holding 50
 * ConfigMaps of about 700 bytes; with `--baseline <checkout>` that build's
 * daemon too, the two taking turns on each read. The CPU is the serving
 * process's own (`/proc/<pid>/stat`), which depends far less than the rate
 * on what else runs on the machine.
 *
 *   node --import tsx test/bench/client-reads.ts [--baseline DIR] [--rounds N] [--seconds S] [--no-write]
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { tableLines } from './format.js'
import { daemonMainOf } from './package-entry.js'
import { replaceSection } from './section.js'
import { call, cpuMs, type DaemonTarget, startDaemon, TOKEN } from './tls-targets.js'
import { ensureWrk, parseWrk } from './wrk.js'

const ROOT = join(import.meta.dirname, '..', '..')
const NS = '/api/v1/namespaces/default/configmaps'
const OBJECTS = 50
const CONNECTIONS = 8
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'

interface Probe {
  label: string
  path: string
  headers?: Record<string, string>
}

const PROBES: Probe[] = [
  { label: '`/api/v1` (discovery)', path: '/api/v1' },
  { label: '`/apis`, aggregated discovery', path: '/apis', headers: { accept: AGGREGATED } },
  { label: '`/apis/apps/v1` (discovery)', path: '/apis/apps/v1' },
  { label: '`/openapi/v2` (JSON)', path: '/openapi/v2', headers: { accept: 'application/json' } },
  { label: '`/openapi/v3/apis/apps/v1`', path: '/openapi/v3/apis/apps/v1' },
  { label: '`/version`', path: '/version' },
  { label: `LIST of ${OBJECTS} as a Table`, path: NS, headers: { accept: TABLE } },
  { label: `LIST of ${OBJECTS} as protobuf`, path: NS, headers: { accept: 'application/vnd.kubernetes.protobuf' } },
  { label: `LIST of ${OBJECTS} as JSON`, path: NS },
  { label: 'GET of one, indented for curl', path: `${NS}/cm-1`, headers: { 'user-agent': 'curl/8.5.0' } },
]

const run = promisify(execFile)

/** wrk against one URL with `headers` for `seconds`; the requests answered and the server's CPU meanwhile. */
async function measure(t: DaemonTarget, probe: Probe, seconds: number): Promise<{ requests: number; cpuMs: number; seconds: number }> {
  const headerArgs = Object.entries({ authorization: `Bearer ${TOKEN}`, ...probe.headers }).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const before = await cpuMs(t.pid)
  const { stdout } = await run('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, ...headerArgs, `https://127.0.0.1:${t.port}${probe.path}`], { timeout: (seconds + 30) * 1000 })
  const result = parseWrk(stdout)
  if (result.errors > 0) throw new Error(`${t.label} ${probe.path}: ${result.errors} answers were errors`)
  return { requests: result.requests, cpuMs: (await cpuMs(t.pid)) - before, seconds: result.requests / result.perSecond }
}

async function fill(t: DaemonTarget): Promise<void> {
  for (let i = 0; i < OBJECTS; i++) {
    const body = JSON.stringify({ metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(600) } })
    const status = await call(t.agent, t.port, 'POST', NS, body)
    if (status !== 201) throw new Error(`${t.label}: creating cm-${i} answered ${status}`)
  }
}

type Totals = { requests: number; cpuMs: number; seconds: number }

function render(targets: DaemonTarget[], totals: Map<DaemonTarget, Totals[]>, rounds: number, seconds: number): string {
  const us = (t: Totals) => Math.round((t.cpuMs * 1000) / t.requests)
  const perSecond = (t: Totals) => Math.round(t.requests / t.seconds).toLocaleString('en-US')
  const [current, baseline] = targets
  const head = ['read', ...targets.flatMap((t) => [`${t.label}: answers/s`, `${t.label}: CPU per answer`]), ...(baseline ? ['CPU, this ÷ before'] : [])]
  const rows = PROBES.map((probe, i) => {
    const cells = targets.flatMap((t) => [perSecond(totals.get(t)![i]!), `${us(totals.get(t)![i]!)} µs`])
    const ratio = baseline ? [`${(us(totals.get(current!)![i]!) / us(totals.get(baseline)![i]!)).toFixed(2)}×`] : []
    return [probe.label, ...cells, ...ratio]
  })
  return [
    '<!-- client-reads: begin -->',
    "## Reads clients make besides a GET: discovery, OpenAPI, Tables, protobuf",
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'CPU'}, load average ${loadavg()[0]!.toFixed(1)} at the end, Node ${process.version}.`,
    `\`node --import tsx test/bench/client-reads.ts${baseline ? ' --baseline <the previous build>' : ''}\`: ${rounds} rounds of ${seconds} s per read, the daemons taking turns in each.`,
    '',
    `Each daemon (\`dist/runtimes/node/main.cjs\`) serves on its embedded store with a static token (\`--token-auth-file\`, group system:masters) and holds ${OBJECTS} ConfigMaps of about 700 bytes in \`default\`;`,
    `\`wrk -t1 -c${CONNECTIONS}\` reads with the token over TLS. The CPU per answer is the serving process's own user and system time (\`/proc/<pid>/stat\`), which depends far less than the rate on what else runs on the machine.`,
    '',
    ...tableLines(head, rows),
    '',
    WHAT_CHANGED,
    '<!-- client-reads: end -->',
    '',
  ].join('\n')
}

const WHAT_CHANGED = `What made the difference (2026-11-27), each read checked to give the same bytes as before:

- **Documents, \`/version\`, \`/metrics\` and indented answers are bytes in hand.** They were Responses of
  text, which every filter that waits for an answer to be sent (in-flight seats, sizes, audit) watched
  through stream stages of its own; the OpenAPI documents were also sized by walking their text on every
  request. They now go out as bytes with their size kept, a document's bytes made once, and the pretty
  filter puts its indented answer in place without Hono's setter, which wrapped it in a streamed copy.
- **Discovery documents are made once per state of the catalogue** (\`core/api/discovery-memo.ts\`),
  kept frozen so that their JSON is encoded once; a custom resource coming or going makes them anew.
- **A protobuf LIST writes each cached item's message once**: the message of each immutable object
  version is kept beside it, as its JSON is, and written again as it is.
- **A Table's rows take their objects' kept texts**: the PartialObjectMetadata a row shows is kept frozen
  for each object version, and the table is written around the kept texts, the cells anew.

The JSON LIST's path did not change: its row shows what two daemons of this machine differ by anyway
(fresh daemons of one build differ by up to 30% in CPU per answer here).`

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean', default: false },
  },
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const log = (text: string) => void process.stderr.write(`${text}\n`)
const missing = ensureWrk(log)
if (missing) throw new Error(missing)
const work = await mkdtemp(join(tmpdir(), 'apiserver-client-reads-'))
const targets: DaemonTarget[] = []
try {
  const builds: Array<[string, string]> = [['this build', ROOT]]
  if (values.baseline) builds.push(['before', resolve(values.baseline)])
  for (const [label, build] of builds) {
    log(`starting ${label} …`)
    const t = await startDaemon(label, { main: daemonMainOf(build), backend: 'embedded', dir: join(work, label.replace(/\W+/g, '-')), maxSockets: CONNECTIONS })
    targets.push(t)
    await fill(t)
  }
  const totals = new Map(targets.map((t) => [t, PROBES.map(() => ({ requests: 0, cpuMs: 0, seconds: 0 }))]))
  for (const [i, probe] of PROBES.entries()) {
    // Unmeasured: a second of each read first, so no target's first round pays for its code warming up.
    for (const t of targets) await measure(t, probe, 1)
    for (let r = 0; r < rounds; r++) {
      for (const t of r % 2 ? [...targets].reverse() : targets) {
        log(`${probe.label}, round ${r + 1}: ${t.label}`)
        const m = await measure(t, probe, seconds)
        const sum = totals.get(t)![i]!
        sum.requests += m.requests
        sum.cpuMs += m.cpuMs
        sum.seconds += m.seconds
      }
    }
  }
  const section = render(targets, totals, rounds, seconds)
  process.stdout.write(section)
  if (!values['no-write']) await replaceSection(ROOT, '<!-- client-reads: begin -->', '<!-- client-reads: end -->', section)
} finally {
  await Promise.all(targets.map((t) => t.stop().catch(() => {})))
  await rm(work, { recursive: true, force: true })
}
