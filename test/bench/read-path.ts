/**
 * The read path of the daemon, side by side in one run: GET of one
 * ConfigMap and LIST of 1,000 (consistent, and `resourceVersion=0`) over
 * TLS with a bearer token from `--token-auth-file`, on the embedded store and
 * on etcd, against "the limit": a Node TLS server answering the same URL
 * with a fixed body of the same size. With `--baseline <checkout>` (a copy of
 * an older commit with its own `npm run build`) both builds run in the same
 * rounds, so their ratio is this change's effect on this machine now.
 *
 *   node --import tsx test/bench/read-path.ts [--baseline DIR] [--rounds N] [--seconds S] [--cpu-prof DIR] [--only get|list] [--no-write]
 *
 * `--only get` or `--only list` drives one kind of read, so that a CPU
 * profile (`--cpu-prof`) shows that path alone; it implies `--no-write`.
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Agent } from 'node:https'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { configMapBody } from './configmap-payload.js'
import { type LoadResult, runLoad } from './load.js'
import { daemonMainOf } from './package-entry.js'
import { replaceSection } from './section.js'
import { call, cpuMs, fetchText, startListening, stopChild, TOKEN } from './tls-targets.js'
import { ensureWrk, wrkGet } from './wrk.js'

const ROOT = join(import.meta.dirname, '..', '..')
const NS = '/api/v1/namespaces/default/configmaps'
const LIST_SIZE = 1000
const GET_SET = 200
const CONCURRENCY = 64
const LIST_CONCURRENCY = 4

interface Target {
  label: string
  build: string
  backend: 'embedded' | 'etcd' | 'limit'
  port: number
  pid: number
  agent: Agent
  stop: () => Promise<void>
}

/** A load's result and the CPU time its server process spent meanwhile. */
interface Measured extends LoadResult {
  cpuMs: number
}

interface Figures {
  /** The issue's GET load: wrk, 2 threads, 32 connections, one ConfigMap (empty when wrk is missing). */
  wrk: Measured[]
  get: Measured[]
  list: Measured[]
  list0: Measured[]
}

/** A load's result with the server's CPU time during it. */
async function measured(pid: number, load: () => Promise<LoadResult>): Promise<Measured> {
  const before = await cpuMs(pid)
  const result = await load()
  return { ...result, cpuMs: (await cpuMs(pid)) - before }
}

function startDaemon(main: string, args: string[], cpuProf: string | undefined): Promise<{ child: ChildProcess; port: number }> {
  return startListening(main, args, cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [])
}

async function daemon(label: string, build: string, backend: 'embedded' | 'etcd', work: string, etcdUrl: string, cpuProf?: string): Promise<Target> {
  const dir = join(work, label.replace(/\W+/g, '-'))
  await mkdir(dir, { recursive: true })
  const tokens = join(dir, 'tokens.csv')
  await writeFile(tokens, `${TOKEN},bench-admin,bench-admin,"system:masters"\n`)
  const args = ['--secure-port', '0', '--bind-address', '127.0.0.1', '--cert-dir', join(dir, 'pki'), '--token-auth-file', tokens, '--logging-format=json']
  if (backend === 'etcd') args.push('--etcd-servers', etcdUrl, '--etcd-prefix', `/${label.replace(/\W+/g, '-')}`)
  else args.push('--data-dir', join(dir, 'data'))
  const { child, port } = await startDaemon(daemonMainOf(build), args, cpuProf)
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  for (let i = 0; ; i++) {
    if ((await call(agent, port, 'GET', '/readyz').catch(() => 0)) === 200) break
    if (i > 500) throw new Error(`${label}: /readyz never answered 200`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return { label, build, backend, port, pid: child.pid ?? 0, agent, stop: async () => (agent.destroy(), await stopChild(child)) }
}

/** The limit's own process: a Node TLS server answering every request with one fixed body. */
const LIMIT_SERVER = `
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
const [cert, key, body] = process.argv.slice(2).map((f) => readFileSync(f))
const server = createServer({ cert, key }, (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(body)
})
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ port: server.address().port, url: 'limit' }) + '\\n'))
process.on('SIGTERM', () => process.exit(0))
`

/** The limit: a Node TLS server answering every request with the body a GET of the ConfigMap gets. */
async function limitServer(work: string, certDir: string, body: string): Promise<Target> {
  const main = join(work, 'limit-server.mjs')
  const bodyFile = join(work, 'limit-body.json')
  await writeFile(main, LIMIT_SERVER)
  await writeFile(bodyFile, body)
  const { child, port } = await startListening(main, [join(certDir, 'apiserver.crt'), join(certDir, 'apiserver.key'), bodyFile], [])
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  return {
    label: 'the limit (Node TLS server, fixed body)',
    build: '',
    backend: 'limit',
    port,
    pid: child.pid ?? 0,
    agent,
    stop: async () => (agent.destroy(), await stopChild(child)),
  }
}

async function fill(t: Target): Promise<void> {
  const load = { total: LIST_SIZE, concurrency: 16, maxSeconds: 120 }
  await runLoad(load, async (i) => (await call(t.agent, t.port, 'POST', NS, configMapBody(`cm-${i}`))) === 201)
}

async function measure(t: Target, seconds: number, figures: Figures, only: string | undefined): Promise<void> {
  const get = { total: 10_000_000, concurrency: CONCURRENCY, maxSeconds: seconds }
  const list = { total: 100_000, concurrency: LIST_CONCURRENCY, maxSeconds: seconds }
  if (only !== 'list') {
    if (wrkMissing === undefined) {
      const url = `https://127.0.0.1:${t.port}${NS}/cm-0`
      figures.wrk.push(
        await measured(t.pid, async () => {
          const r = await wrkGet(url, TOKEN, seconds)
          return { count: r.requests, errors: r.errors, seconds, perSecond: r.perSecond, p50Ms: r.p50Ms, p99Ms: r.p99Ms }
        }),
      )
    }
    figures.get.push(await measured(t.pid, () => runLoad(get, async (i) => (await call(t.agent, t.port, 'GET', `${NS}/cm-${i % GET_SET}`)) === 200)))
  }
  if (t.backend === 'limit' || only === 'get') return
  figures.list.push(await measured(t.pid, () => runLoad(list, async () => (await call(t.agent, t.port, 'GET', NS)) === 200)))
  figures.list0.push(await measured(t.pid, () => runLoad(list, async () => (await call(t.agent, t.port, 'GET', `${NS}?resourceVersion=0`)) === 200)))
}

/** Server CPU per request, µs. */
const cpuPer = (rs: Measured[]) => (rs.reduce((s, r) => s + r.cpuMs, 0) * 1000) / rs.reduce((s, r) => s + r.count, 0)
const rate = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.count, 0) / rs.reduce((s, r) => s + r.seconds, 0)
const errors = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.errors, 0)
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—')
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '—')

function render(targets: Target[], figures: Map<Target, Figures>, rounds: number, seconds: number, baseline: boolean): string {
  const limit = targets.find((t) => t.backend === 'limit')!
  const limitRate = rate(figures.get(limit)!.get)
  const cpu = cpus()
  const lines = [
    '<!-- read-path: begin -->',
    '## The read path: GET and LIST over TLS with a bearer token',
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, load average ${loadavg()[0]!.toFixed(1)}, in one run of`,
    `\`node --import tsx test/bench/read-path.ts${baseline ? ' --baseline <the previous build>' : ''}\`: ${rounds} rounds of ${seconds} s per figure, the targets taking turns in each round.`,
    '',
    `Each daemon (\`dist/runtimes/node/main.cjs\`) serves on loopback with a static token (\`--token-auth-file\`, group system:masters) and holds ${LIST_SIZE.toLocaleString('en-US')} ConfigMaps of about 1 kB in \`default\`;`,
    `\`wrk -t2 -c32\` GETs one of them with the token (the issue's load); a Node HTTPS client with keep-alive sends GETs of one of ${GET_SET} of them, ${CONCURRENCY} in flight, and LISTs of all of them, ${LIST_CONCURRENCY} in flight, bodies read in full.`,
    'The limit is a Node TLS server answering the same GET with a fixed body: what this runtime and client reach with no API server at all.',
    'Client, daemons and etcd share the same cores, so compare the ratios within this table. The server CPU columns',
    "are the serving process's own user and system time per answer (`/proc/<pid>/stat`; etcd's is not counted):",
    'they depend far less than the rates on what else runs on the machine.',
    '',
    '| target | wrk GET | wrk GET ÷ limit | server CPU per wrk GET | CPU ÷ limit | GET, Node client | GET ÷ limit | server CPU per GET | CPU ÷ limit | LIST 1,000 | server CPU per LIST | LIST 1,000, `resourceVersion=0` | server CPU per LIST, `resourceVersion=0` |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  const limitWrkRate = rate(figures.get(limit)!.wrk)
  const limitWrkCpu = cpuPer(figures.get(limit)!.wrk)
  const limitCpu = cpuPer(figures.get(limit)!.get)
  for (const t of targets) {
    const f = figures.get(t)!
    const g = rate(f.get)
    const us = (n: number) => `${fmt(n)} µs`
    const err = errors(f.wrk) + errors(f.get) + errors(f.list) + errors(f.list0)
    const w = rate(f.wrk)
    const wrkCells = [`${fmt(w)}/s`, ratio(w, limitWrkRate), us(cpuPer(f.wrk)), ratio(cpuPer(f.wrk), limitWrkCpu)]
    const lists =
      t.backend === 'limit'
        ? ['—', '—', '—', '—']
        : [`${rate(f.list).toFixed(1)}/s`, us(cpuPer(f.list)), `${rate(f.list0).toFixed(1)}/s`, us(cpuPer(f.list0))]
    const cpu = cpuPer(f.get)
    lines.push(`| ${t.label}${err ? ` (${err} errors)` : ''} | ${wrkCells.join(' | ')} | ${fmt(g)}/s | ${ratio(g, limitRate)} | ${us(cpu)} | ${ratio(cpu, limitCpu)} | ${lists.join(' | ')} |`)
  }
  if (baseline) {
    lines.push(
      '',
      'This build against the previous one, rates as this build ÷ previous (higher is better), server CPU per answer as previous ÷ this build (higher is better):',
      '',
      '| backend | wrk GET rate | wrk GET CPU | GET rate | GET CPU | LIST rate | LIST CPU | LIST `resourceVersion=0` rate | its CPU |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    )
    for (const backend of ['embedded', 'etcd'] as const) {
      const now = targets.find((t) => t.backend === backend && t.build === ROOT)
      const before = targets.find((t) => t.backend === backend && t.build !== ROOT)
      if (!now || !before) continue
      const [a, b] = [figures.get(now)!, figures.get(before)!]
      const pair = (x: Measured[], y: Measured[]) => `${ratio(rate(x), rate(y))} | ${ratio(cpuPer(y), cpuPer(x))}`
      lines.push(`| ${backend} | ${pair(a.wrk, b.wrk)} | ${pair(a.get, b.get)} | ${pair(a.list, b.list)} | ${pair(a.list0, b.list0)} |`)
    }
  }
  lines.push('', WHAT_CHANGED, '<!-- read-path: end -->', '')
  return lines.join('\n')
}

/** What the read path's figures show, kept with the section whenever it is written again. */
const WHAT_CHANGED = `### What changed on the read path, and where the time goes

The previous build above is bc33b17, the commit before the change described here,
built from a copy of its tree and run in the same rounds (\`--baseline\`). The rates
move with the machine's other load (in this run the limit itself reached about a
third of its rate in quieter runs); the server's CPU per answer moves far less.

- **A long list hands out the runs it joined before.** A JSON LIST of more than 500
  objects is written a hundred items at a time, each run the items' kept bytes copied
  into one new allocation. Allocating and filling those runs (fresh pages each time)
  was the largest cost the server added to a LIST after the socket write: 12-14% of
  its profile. A run of deep-frozen items now keeps its joined bytes, found by its
  first object and checked item by item against the run asked for. The watch cache
  gives a collection that has not changed as the same objects in the same order, so
  a LIST read again hands out the bytes it made before; a run whose objects changed
  is joined anew, and the list's fields and its end are pieces of their own. What is
  kept lives as long as the run's first object version: the cache holds about a
  second copy of the bytes of what was listed.
- **The watch cache finds a collection by two binary searches.** Its keys are in
  order, so the objects of one namespace run from the first key at or after the
  prefix to the first key past it: one slice of the array, instead of a prefix test
  per key (5-7% of a LIST's profile).

The LIST columns above are the change: 1.15× to 1.46× less CPU per LIST. In single
runs of \`wrk -c32\` against one daemon on its embedded store, the builds taking turns
in a quieter hour, a \`resourceVersion=0\` LIST of 1,000 took 3,061 to 3,222 µs of CPU
against 4,096 to 4,478 µs, and a consistent one 2,378 µs against 4,406 to 4,446 µs (474
to 488 LISTs/s against 270 to 276). GETs do not touch these paths; their columns
moved with the load. After the change the LIST profile is \`writev\` (the TLS write of
the megabyte and its system call) at 52%, and nothing of the server's own above 1.5%.

### The goals, by this measurement

- **GET, wrk, 40% of the limit: not met.** The share of the limit is in the table
  (\`wrk GET ÷ limit\`): with wrk the limit costs some 20 µs of CPU per GET here, and
  this server about 7× that on the embedded store and 9-10× on etcd. What is left is
  spread over Node's HTTP and TLS (the socket write and the wake-up of the reader,
  the same for the limit), garbage collection, promises, undici's Headers for the
  request and the answer, and the filter chain, each a few per cent.
- **LIST of 1,000, 3× upstream: not met.** Upstream's \`resourceVersion=0\` LIST was
  1.0% and 0.43% of its run's wrk limit; 3× that, brought to this run's limit, is in
  the daemon suite's goals table. Half of a LIST's CPU is the TLS write of its
  megabyte, which the client pays again to read it on the same two cores; Node's
  HTTP/1.1 chunked writes add a copy of each run there (a chunk is three buffers,
  which the TLS layer copies into one before encrypting).

### The change before (2026-11-25, against 1994afd)

- **An object's answer is its bytes in hand again.** An API object's JSON had become
  one observable chunk, so that the filters that wait for an answer to be sent (the
  in-flight seats, the response sizes) could watch it without a stream stage each;
  it still cost a ReadableStream (made transferable on Node 20), a reader and a
  Response of the runtime's per answer, and a streamed write. The answer is now the
  bytes, their size kept beside them: the Node adapter writes them at once, and the
  in-flight seat of such an answer is given back as the handler returns (upstream's
  handler has written its encoded object by then too); a streamed body (a long LIST,
  a watch) still holds its seat until it ends. A kept object keeps its answer's
  bytes rather than its text, so a GET of a version read before encodes nothing.
- **Bearer tokens are digested at once.** The authenticators file tokens under their
  SHA-256. Web Crypto's digest is a job on the runtime's thread pool, 12-36 µs per
  token; \`@noble/hashes\` (pure JavaScript, on every runtime) takes 2 µs. The
  authentication filter's own macrotask keeps requests that arrive together reaching
  the store together, which a digest on the pool used to do by the way (an earlier
  attempt at this, before that macrotask, raised the CPU per write).

LISTs of 1,000 are streamed as before, and on the embedded store they cost what
they did. On etcd their CPU per LIST moved between runs (0.71× in the run above,
1.03× in one a few minutes earlier). Single-target runs taking turns, 1994afd against
the first change here (0164a47), gave that change about 1.1× the CPU per LIST on etcd,
consistent and \`resourceVersion=0\` alike, and of its two parts the in-flight seat's
(a build of 1994afd with that part alone showed it, 1.04-1.2× over several runs, most
of it on the main thread; one with the answer's part alone did not). That part only
looks up the answer's kept size before reading its body, and a LIST's answer has none;
run under \`perf\` (V8's \`--perf-basic-prof\`) the builds measured alike (1,889 and
1,920 µs), with the same profile. The cause is not found.

### Earlier (2026-11-23, against e165e79)

- **LIST: bytes kept, not text.** A JSON LIST of more than 500 objects used to be
  joined as text a hundred items at a time and encoded with a TextEncoder on every
  read (15% of a LIST's profile). Each cached item now keeps its UTF-8 bytes as its
  list writes it, and a run of items is copied together into one allocation
  (\`apiListJsonByteChunks\`).
- **LIST: no stream stages per filter.** The streamed answer is an observable body
  (as a watch's): the metrics filter counts its bytes from the pulls instead of
  piping it through a TransformStream (two more streams per LIST). An observable body
  now pulls nothing before it is read, so every piece is counted
  (\`test/integration/response-sizes.test.ts\`).
- **LIST: one slice of the cache.** The watch cache keeps its objects in key order
  beside their keys: a LIST takes them in one pass, without a map lookup and a
  generator step per object.
- **GET: less per request.** Request info reads the path from the request's URL text
  (no second URL parse); request metrics find their three samples once per label set
  and keep them; the Node listener reads an answer's headers once for
  \`Connection: close\` and hop-by-hop headers instead of ten validated lookups; a
  kept JSON answer keeps its size in bytes for the metrics.

CPU profiles (\`read-path.ts --only get\` or \`--only list\` with \`--cpu-prof\`, the busy
seconds of each daemon, self time). The profiler samples wall time: \`writev\` (the TLS
write and its system call, one per answer as for the limit, checked with strace)
includes the moments the loaded machine ran something else, so it reads larger than
its CPU share.

- GET on the embedded store, before: \`writev\` 31%, Node's HTTP internals 15%, undici's
  Headers and Request 8%, the server's own code 35% spread thinly (the router's search
  2%, response building 2%, metric sample lookups 3%, request info and URL parsing 3%,
  authentication 2%), garbage collection 2%. After: \`writev\` 38%, Node's HTTP 16%,
  undici 6.6% (mostly the three answer headers set by priority and fairness and the
  audit ID), the server's code 30%, garbage collection 2%.
- GET on etcd: the same, plus garbage collection 9-12% and the gRPC client 4-5%. The
  revision question is shared: etcd's own \`grpc_server_handled_total\` for Range, read
  around a one-off run of GETs at 64 in flight, moved by 0.055 per GET (one per 18 GETs), so its cost per GET is small; where the extra
  garbage comes from is not pinned down yet.
- LIST of 1,000, before: \`writev\` 32%, UTF-8 encoding 15%, garbage collection 7%, the
  cache scan 5%, joining item texts 4%, stream set-up (\`makeTransferable\`) 2%. After:
  \`writev\` 42-50%, the copy of the items' bytes (\`joinRun\`) 12-14%, the cache's
  slice 5-7%, garbage collection 2-4%.`

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '4' },
    'cpu-prof': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    only: { type: 'string' },
  },
})
if (values.only !== undefined && values.only !== 'get' && values.only !== 'list') throw new Error('--only takes get or list')
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const log = (text: string) => void process.stderr.write(`${text}\n`)
const work = await mkdtemp(join(tmpdir(), 'apiserver-read-path-'))
const wrkMissing = ensureWrk(log)
if (wrkMissing) log(`no wrk figures: ${wrkMissing}`)
const etcd = await EtcdServer.start()
const targets: Target[] = []
try {
  const builds: Array<[string, string]> = [['this build', ROOT]]
  if (values.baseline) builds.push(['previous build', resolve(values.baseline)])
  for (const [name, build] of builds) {
    for (const backend of ['embedded', 'etcd'] as const) {
      const prof = values['cpu-prof'] ? join(resolve(values['cpu-prof']), `${name.replace(/\W+/g, '-')}-${backend}`) : undefined
      log(`starting ${name} on ${backend} …`)
      const t = await daemon(`${name}, ${backend === 'etcd' ? 'etcd' : 'embedded store'}`, build, backend, work, etcd.clientUrl, prof)
      targets.push(t)
      await fill(t)
    }
  }
  const first = targets[0]!
  const body = await fetchText(first.agent, first.port, `${NS}/cm-0`)
  targets.push(await limitServer(work, join(work, first.label.replace(/\W+/g, '-'), 'pki'), body))
  // Unmeasured: a second of each read, so no target's first round pays for its JIT warming up.
  for (const t of targets) await measure(t, 1, { wrk: [], get: [], list: [], list0: [] }, values.only)
  const figures = new Map(targets.map((t) => [t, { wrk: [], get: [], list: [], list0: [] } as Figures]))
  for (let r = 0; r < rounds; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      log(`round ${r + 1}: ${t.label}`)
      await measure(t, seconds, figures.get(t)!, values.only)
    }
  }
  const section = render(targets, figures, rounds, seconds, Boolean(values.baseline))
  process.stdout.write(section)
  if (!values['no-write'] && !values.only) await replaceSection(ROOT, '<!-- read-path: begin -->', '<!-- read-path: end -->', section)
} finally {
  await Promise.all(targets.map((t) => t.stop().catch(() => {})))
  await etcd.destroy()
  await rm(work, { recursive: true, force: true })
}
