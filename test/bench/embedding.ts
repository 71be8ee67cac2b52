/**
 * What a test suite pays for an embedded server, in fresh processes (one per
 * round and setup, the setups taking turns): `createApiServer()` to its first
 * answer, then `reset()` after a test's worth of writes, `snapshot()` and
 * `restore()`, and the cost of the activity log (`record: true`) on creates.
 * Two setups: an empty server, and one seeded with 10 CRDs, a namespace and
 * 1,000 objects (half ConfigMaps, half custom objects). Medians over the rounds.
 *
 *   npm run build && node --import tsx test/bench/embedding.ts [--rounds N] [--no-write] [--baseline DIR]
 *
 * `--baseline DIR` takes the figures of another build too (DIR is its `dist/`),
 * the two taking turns in every round, and shows them side by side with the
 * ratios, so that a change is judged under the same load as what it changes.
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import { spawn } from 'node:child_process'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { packageEntry } from './package-entry.js'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BEGIN = '<!-- embedding: begin -->'
const END = '<!-- embedding: end -->'
/** Writes a test makes before its reset: what reset() and restore() undo. */
const WRITES_PER_TEST = 20
/** Creates timed with and without the activity log, in one process, alternating in blocks. */
const RECORD_BLOCKS = 6
const RECORD_BLOCK_SIZE = 100
/** Repeated figures in one process (a further server, reset, snapshot, restore): the first ones warm up and are not counted, as a suite's tests after its first run warm. */
const ROUNDS_IN_PROCESS = 15
/** Servers held at once for the memory figure. */
const HELD_SERVERS = 100
const WARM_UP_ROUNDS = 5
/** The seeded setup: the issue's figure, 10 CRDs and 1,000 objects (half ConfigMaps, half custom objects). */
const SEEDED_CRDS = 10
const SEEDED_OBJECTS = 1000

interface Round {
  /** `import` of the package's entry point, as Node resolves it for a consumer. */
  importMs: number
  firstAnswerMs: number
  /** The same, for a server started with the same options after the first (median of 5). */
  againMs: number
  /** The quickest of those. */
  againMinMs: number
  /** The process's CPU time (every thread: the collector's too) from createApiServer() to that first answer, median: load on the machine changes it less than the elapsed time. */
  againCpuMs: number
  /** HELD_SERVERS more servers alike, created one after another and all kept: until the last answered, and the resident memory they added. */
  heldMs: number
  heldMB: number
  resetMs: number
  snapshotMs: number
  restoreMs: number
  /** Creates per second without / with `record: true`. */
  createRate: number
  recordedCreateRate: number
}

/** Runs in a fresh `node`: the package from dist/, one setup, every figure once (reset and restore: median of 5). */
const roundScript = (entry: string, seeded: boolean): string => `
const importStart = performance.now()
const { ADMIN_IDENTITY, createApiServer } = await import(${JSON.stringify(entry)})
const importMs = performance.now() - importStart
const seeded = ${seeded}
const crd = (k) => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets' + k + '.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets' + k, singular: 'widget' + k, kind: 'Widget' + k },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }] },
})
const objects = seeded ? [
  ...Array.from({ length: ${SEEDED_CRDS} }, (_, k) => crd(k)),
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  ...Array.from({ length: ${SEEDED_OBJECTS / 2} }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-' + i, namespace: 'shop' }, data: { i: String(i) } })),
  ...Array.from({ length: ${SEEDED_OBJECTS / 2} }, (_, i) => ({ apiVersion: 'example.com/v1', kind: 'Widget' + (i % ${SEEDED_CRDS}), metadata: { name: 'w-' + i, namespace: 'shop' }, spec: { size: i } })),
] : undefined
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[s.length >> 1] }
const json = { 'content-type': 'application/json' }
const create = async (server, name) => {
  const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps', { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, data: { a: 'b' } }) }))
  if (res.status !== 201) throw new Error('create: ' + res.status)
  await res.arrayBuffer()
}
const writes = async (server, tag) => { for (let i = 0; i < ${WRITES_PER_TEST}; i++) await create(server, tag + '-' + i) }

const t0 = performance.now()
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...(objects ? { objects } : {}) })
const first = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))
await first.arrayBuffer()
const firstAnswerMs = performance.now() - t0
if (first.status !== 200) throw new Error('first answer: ' + first.status)

// Servers started again with the same options: what each further test file's server costs (start-up templates).
const again = [], againCpu = []
for (let r = 0; r < ${ROUNDS_IN_PROCESS}; r++) {
  const t = performance.now()
  const cpu = process.cpuUsage()
  const alike = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...(objects ? { objects } : {}) })
  const res = await alike.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))
  await res.arrayBuffer()
  const spent = process.cpuUsage(cpu)
  if (r >= ${WARM_UP_ROUNDS}) {
    again.push(performance.now() - t)
    againCpu.push((spent.user + spent.system) / 1000)
  }
  if (res.status !== 200) throw new Error('first answer again: ' + res.status)
  await alike.shutdown()
}

// Many servers held at once, as a parallel suite holds them: the time to have them all answering, and the memory they take.
global.gc?.()
const rssBefore = process.memoryUsage().rss
let t1 = performance.now()
const held = []
for (let i = 0; i < ${HELD_SERVERS}; i++) {
  const one = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...(objects ? { objects } : {}) })
  await (await one.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))).arrayBuffer()
  held.push(one)
}
const heldMs = performance.now() - t1
global.gc?.()
const heldMB = (process.memoryUsage().rss - rssBefore) / 1e6
await Promise.all(held.map((one) => one.shutdown()))

const resets = [], snapshots = [], restores = []
for (let r = 0; r < ${ROUNDS_IN_PROCESS}; r++) {
  const kept = r >= ${WARM_UP_ROUNDS}
  await writes(server, 'reset' + r)
  let t = performance.now(); await server.reset(); if (kept) resets.push(performance.now() - t)
  t = performance.now(); const snap = await server.snapshot(); if (kept) snapshots.push(performance.now() - t)
  await writes(server, 'restore' + r)
  t = performance.now(); await server.restore(snap); if (kept) restores.push(performance.now() - t)
}
await server.shutdown()

// The activity log's cost: the same creates on two servers, alternating blocks, so load hits both alike.
const plain = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
const recorded = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, record: true })
await Promise.all([plain.ready, recorded.ready])
const spent = new Map([[plain, 0], [recorded, 0]])
for (let b = 0; b < ${RECORD_BLOCKS}; b++) {
  for (const s of b % 2 ? [recorded, plain] : [plain, recorded]) {
    const t = performance.now()
    for (let i = 0; i < ${RECORD_BLOCK_SIZE}; i++) await create(s, 'b' + b + '-' + i)
    spent.set(s, spent.get(s) + performance.now() - t)
  }
}
const n = ${RECORD_BLOCKS * RECORD_BLOCK_SIZE}
if (recorded.activity.requests().length !== n) throw new Error('recorded ' + recorded.activity.requests().length + ' requests, not ' + n)
await Promise.all([plain.shutdown(), recorded.shutdown()])
process.stdout.write(JSON.stringify({
  importMs, firstAnswerMs, againMs: median(again), againMinMs: Math.min(...again), againCpuMs: median(againCpu), heldMs, heldMB, resetMs: median(resets), snapshotMs: median(snapshots), restoreMs: median(restores),
  createRate: n / spent.get(plain) * 1000, recordedCreateRate: n / spent.get(recorded) * 1000,
}) + '\\n')
process.exit(0)
`

function roundOnce(seeded: boolean, dist: string): Promise<Round> {
  const entry = packageEntry(join(dist, '..'))
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', roundScript(entry, seeded)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.once('error', fail)
    child.once('exit', (code) => {
      clearTimeout(timer)
      try {
        done(JSON.parse(out) as Round)
      } catch (err) {
        fail(new Error(`a round exited ${code}: ${String(err)} ${out}`))
      }
    })
  })
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const ms = (value: number): string => (value < 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(0)} ms`)

interface Figures {
  empty: Round[]
  seeded: Round[]
}

function render(figures: Figures, rounds: number, load: number, before?: Figures): string {
  // With a baseline, each setup's column is followed by the baseline's and the ratio of the two.
  const cell = (of: Figures, setup: keyof Figures, pick: (r: Round) => number, format: (v: number) => string): string => {
    const now = median(of[setup].map(pick))
    if (!before) return format(now)
    const then = median(before[setup].map(pick))
    return `${format(now)} | ${format(then)} | ${(now / then).toFixed(2)}×`
  }
  const row = (label: string, pick: (r: Round) => number, format = ms): string =>
    `| ${label} | ${cell(figures, 'empty', pick, format)} | ${cell(figures, 'seeded', pick, format)} |`
  const header = before
    ? '| figure (median) | empty server | before | ratio | seeded | before | ratio |\n| --- | --- | --- | --- | --- | --- | --- |'
    : '| figure (median) | empty server | seeded |\n| --- | --- | --- |'
  const rate = (value: number): string => `${value.toFixed(0)}/s`
  const all = [...figures.empty, ...figures.seeded]
  const ratio = median(all.map((r) => r.recordedCreateRate / r.createRate))
  return `${BEGIN}
## Embedding: start, reset and restore

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'} (load average ${load.toFixed(1)} when it began),
Node ${process.version}. \`node --import tsx test/bench/embedding.ts\`: ${rounds} rounds, a fresh
process for each round of each setup, the setups taking turns; medians over the rounds.
The server is the built package (\`dist/\`), imported as a consumer's \`import 'kube-apiserver-ts'\` resolves under Node
(the code-cached library script, whose cache the first round of each build writes), on its in-memory store, called through \`server.fetch\`.
*Seeded* starts with \`objects\`: ${SEEDED_CRDS} CustomResourceDefinitions, a namespace,
${SEEDED_OBJECTS / 2} ConfigMaps and ${SEEDED_OBJECTS / 2} custom objects. *Again* is a further server created with the same
options in the same process, which begins from the first one's start-up (\`reuseStartup\`). Before each \`reset()\` and \`restore()\` a
test's worth of writes (${WRITES_PER_TEST} ConfigMap creates) is undone. Each repeated figure is the median of
${ROUNDS_IN_PROCESS - WARM_UP_ROUNDS} in its process, after ${WARM_UP_ROUNDS} not counted (the code warming up, as in a suite after its first tests).
Its CPU time is the process's, every thread's (the garbage collector's too), which other work on the machine changes less than the time elapsed.${
    before
      ? `
*Before* is the build the changes described below started from (\`--baseline\`), run in the same rounds, the two builds taking turns; *ratio* is this build's median over the baseline's.`
      : ''
  }

${header}
${row('`import` of the package (what Node resolves for a consumer)', (r) => r.importMs)}
${row('`createApiServer()` to the first answer (a list)', (r) => r.firstAnswerMs)}
${row('the same, again with the same options', (r) => r.againMs)}
${row('the same again: CPU time of the process', (r) => r.againCpuMs)}
${row(`${HELD_SERVERS} more such servers held at once: until the last answered`, (r) => r.heldMs)}
${row(`${HELD_SERVERS} more such servers held at once: resident memory added`, (r) => r.heldMB, (v) => `${v.toFixed(0)} MB`)}
${row('`reset()`', (r) => r.resetMs)}
${row('`snapshot()`', (r) => r.snapshotMs)}
${row('`restore(snapshot)`', (r) => r.restoreMs)}
${row('creates, `record` off', (r) => r.createRate, rate)}
${row('creates, `record: true`', (r) => r.recordedCreateRate, rate)}

With the activity log on, creates ran at ${ratio.toFixed(2)}× the rate without it (the two servers in
one process taking turns in blocks of ${RECORD_BLOCK_SIZE}; each recorded create keeps a frozen copy of the
written object and one request entry). \`snapshot()\` copies nothing (the store's values are
immutable); \`reset()\` and \`restore()\` put the store's contents back at once, end the watches over
what changed (the watch caches of those resources list them again; the others move on to the new
revision), and wait until every watch cache holds the restored state and the served custom resources match it.

The goals (a test harness's): a server to its first answer under 5 ms, \`reset()\` under 1 ms, a server
seeded with 10 CRDs and 1,000 objects answering under 50 ms, 100 servers in one process under 1 GB.
By this run, for servers after the first of their options in a process: ${goals(figures)}.
The first server of a process pays for loading and compiling the code and for its start-up writes.
Later servers' first answers vary most with garbage collection: the quickest took
${quickest(figures)} in this run${before ? ` (before: ${quickest(before)})` : ''}.
${END}
`
}

function quickest(figures: Figures): string {
  return `${ms(Math.min(...figures.empty.map((r) => r.againMinMs)))} (empty) and ${ms(Math.min(...figures.seeded.map((r) => r.againMinMs)))} (seeded)`
}

function goals(figures: Figures): string {
  const verdict = (met: boolean): string => (met ? 'met' : 'not met')
  const first = median(figures.empty.map((r) => r.againMs))
  const reset = median(figures.empty.map((r) => r.resetMs))
  const seeded = median(figures.seeded.map((r) => r.againMs))
  const held = Math.max(median(figures.empty.map((r) => r.heldMB)), median(figures.seeded.map((r) => r.heldMB)))
  return [
    `first answer ${ms(first)} (${verdict(first < 5)})`,
    `\`reset()\` ${ms(reset)} (${verdict(reset < 1)})`,
    `seeded ${ms(seeded)} (${verdict(seeded < 50)})`,
    `${HELD_SERVERS} servers ${held.toFixed(0)} MB (${verdict(held < 1000)})`,
  ].join(', ')
}

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, 'no-write': { type: 'boolean', default: false }, baseline: { type: 'string' } },
})
const rounds = Number(values.rounds)
const load = loadavg()[0] ?? 0
const builds = [{ dist: join(ROOT, 'dist'), figures: { empty: [], seeded: [] } as Figures }]
if (values.baseline) builds.push({ dist: resolve(values.baseline), figures: { empty: [], seeded: [] } })
for (let r = 0; r < rounds; r++) {
  for (const seeded of r % 2 ? [true, false] : [false, true]) {
    // The builds take turns too, so that neither always runs first.
    for (const build of (r >> 1) % 2 ? [...builds].reverse() : builds) {
      process.stderr.write(`round ${r + 1}: ${seeded ? 'seeded' : 'empty'}${builds.length > 1 ? (build === builds[0] ? ' (this build)' : ' (baseline)') : ''}\n`)
      ;(seeded ? build.figures.seeded : build.figures.empty).push(await roundOnce(seeded, build.dist))
    }
  }
}
const section = render(builds[0]!.figures, rounds, load, builds[1]?.figures)
process.stdout.write(section)
if (!values['no-write']) await replaceSection(ROOT, BEGIN, END, section)
