/**
 * Start-up as envtest sees it: the built bin exec'd with `--help` (envtest
 * reads it before each start), then with envtest's files
 * and command line (test/e2e/harnesses.ts) on a fresh, empty etcd each
 * round, as envtest starts one per test suite, timed from the exec to the
 * first 200 on `/healthz` (envtest's own check: no client certificate, TLS
 * not verified) and on to envtest's next step, the `default` namespace read
 * as its admin. Probes go out every 10 ms where envtest polls every 100 ms,
 * so the figure is the server's, not the poll's.
 *
 *   node --import tsx test/bench/envtest-start.ts [--rounds N] [--baseline DIR] [--upstream KUBE_APISERVER] [--timeline] [--no-template] [--no-write]
 *
 * `--baseline DIR`: another build (a copy of an older commit's tree with
 * its own `npm run build`), the two taking turns in each round.
 * `--upstream KUBE_APISERVER` (or UPSTREAM_KUBE_APISERVER in the
 * environment): upstream's binary started the same way in each round, with
 * `--insecure-port=0` added as envtest adds it when the help lists that flag
 * (docs/benchmarks.md, "How to run", says how to build v1.20.2).
 * `--timeline`: the daemon's log lines of the last round, each with the
 * time since the exec at which it arrived.
 * `--no-template`: each start (of the baseline too) finds no start-up template
 * (runtimes/node/daemon/startup-template.ts) and bootstraps the empty etcd
 * object by object, keeping a template as a first start does; by default
 * every measured start begins from the template the unmeasured first start
 * kept.
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { freePort } from '../e2e/daemon.js'
import { prepareEnvtest, probe } from '../e2e/harnesses.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { forgetStartupTemplates } from './daemon.js'
import { replaceSection } from './section.js'
import { cpuMs as cpuMsOf, rssMiB } from './tls-targets.js'
import { daemonMainOf } from './package-entry.js'

const ROOT = join(import.meta.dirname, '..', '..')
const PROBE_EVERY_MS = 10
const GIVE_UP_MS = 60_000

/** Log lines that mark the phases of a start, by what they begin with after the header. */
const MILESTONES = {
  /** The certificates are read: the bundle is loaded and the flags checked. */
  certificates: '"client certificates are verified against --client-ca-file',
  /** The etcd client is loaded and etcd answered. */
  storage: '"objects are stored in etcd',
  /** The bootstrap objects are written, the controllers' first passes done, the port open. */
  listening: '"Serving on',
} as const

interface Round {
  /** `--help`, as envtest runs it before the start: exec to exit. */
  helpMs: number
  /** Exec to the first /healthz 200. */
  healthzMs: number
  /** Exec to each milestone's log line. */
  milestones: Record<keyof typeof MILESTONES, number>
  /** CPU time the server had used by then. */
  cpuMs: number
  /** The server's resident memory then, in MB. */
  rssMb: number
  /** Exec to the default namespace read as envtest's admin. */
  namespaceMs: number
  /** The server's log lines, each with when it arrived. */
  timeline: Array<[number, string]>
}

async function until(child: ChildProcess, check: () => Promise<boolean>, log: Array<[number, string]>): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS
  while (!(await check())) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${log.map(([, line]) => line).join('\n')}`)
    if (Date.now() > deadline) throw new Error(`no answer within ${GIVE_UP_MS / 1000} s:\n${log.map(([, line]) => line).join('\n')}`)
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS))
  }
}

/** What a round starts: a build's bin, or upstream's binary; `extraArgs` after envtest's own. */
interface Starter {
  name: string
  command: string
  extraArgs: string[]
  /** The build's tree (its start-up templates); none for upstream. */
  build?: string
}

/** The bin run as envtest runs it to read its flags; exec to exit. */
async function helpMsOf(command: string): Promise<number> {
  const t0 = performance.now()
  await new Promise<void>((resolve, reject) => {
    const help = spawn(command, ['--help'], { stdio: 'ignore' })
    help.once('error', reject)
    help.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`--help exited with ${code}`))))
  })
  return performance.now() - t0
}

async function once(starter: Starter, work: string): Promise<Round> {
  const etcd = await EtcdServer.start()
  const certDir = await mkdtemp(join(work, 'k8s_test_framework_'))
  try {
    const port = await freePort()
    const setup = await prepareEnvtest(certDir, { address: '127.0.0.1', port, etcdUrl: etcd.clientUrl })
    const admin = { cert: setup.admin.certificate, key: setup.admin.privateKey }
    const timeline: Array<[number, string]> = []
    const helpMs = await helpMsOf(starter.command)
    const t0 = performance.now()
    // The bin itself, as envtest execs it (its #! line starts node).
    const child = spawn(starter.command, [...setup.args, ...starter.extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] })
    createInterface({ input: child.stderr! }).on('line', (line) => timeline.push([performance.now() - t0, line]))
    try {
      await until(child, async () => (await probe(`https://127.0.0.1:${port}/healthz`)) === 200, timeline)
      const healthzMs = performance.now() - t0
      // MB (10^6 bytes), as the daemon suite's memory figures.
      const [cpuMs, rssMb] = await Promise.all([cpuMsOf(child.pid!), rssMiB(child.pid!).then((mib) => (mib * 2 ** 20) / 1e6)])
      await until(child, async () => (await probe(`https://127.0.0.1:${port}/api/v1/namespaces/default`, admin)) === 200, timeline)
      const at = (text: string) => timeline.find(([, line]) => line.includes(text))?.[0] ?? Number.NaN
      const milestones = { certificates: at(MILESTONES.certificates), storage: at(MILESTONES.storage), listening: at(MILESTONES.listening) }
      return { helpMs, healthzMs, cpuMs, rssMb, milestones, namespaceMs: performance.now() - t0, timeline }
    } finally {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await exited
    }
  } finally {
    await etcd.destroy()
    await rm(certDir, { recursive: true, force: true })
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function goal(rounds: Round[]): string {
  const healthz = median(rounds.map((r) => r.healthzMs))
  return healthz <= 300 ? `met (${healthz.toFixed(0)} ms)` : `not met (${healthz.toFixed(0)} ms, ${(healthz - 300).toFixed(0)} ms over)`
}

function render(starters: Starter[], figures: Map<string, Round[]>, rounds: number, noTemplate: boolean): string {
  const [mine, other] = starters.filter((s) => s.build).map(({ name }) => figures.get(name)!)
  const upstream = starters.find((s) => !s.build)
  const theirs = upstream ? figures.get(upstream.name)! : undefined
  /** `whose`: the row is the daemon's own (its log's phases), which upstream has no line for. */
  const row = (label: string, pick: (r: Round) => number, whose: 'any' | 'daemon' = 'any', unit = 'ms'): string => {
    const a = median(mine!.map(pick))
    const cells = [`${a.toFixed(0)} ${unit}`]
    if (other) {
      const b = median(other.map(pick))
      cells.push(`${b.toFixed(0)} ${unit}`, (a / b).toFixed(2))
    }
    if (theirs) {
      const u = whose === 'any' ? median(theirs.map(pick)) : Number.NaN
      cells.push(Number.isFinite(u) ? `${u.toFixed(0)} ${unit}` : '—', Number.isFinite(u) ? (a / u).toFixed(2) : '—')
    }
    return `| ${label} | ${cells.join(' | ')} |`
  }
  const columns = ['figure (median)', 'this build', ...(other ? ['previous build', 'this / previous'] : []), ...(theirs ? ['upstream v1.20.2', 'this / upstream'] : [])]
  const head = `| ${columns.join(' | ')} |\n|${columns.map(() => ' --- |').join('')}`
  return `<!-- envtest-start: begin -->
## Start-up under envtest

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'} (load average ${loadavg()[0]!.toFixed(1)} at the end),
Node ${process.version}. \`node --import tsx test/bench/envtest-start.ts${other ? ' --baseline <the previous build>' : ''}${theirs ? ' --upstream <kube-apiserver>' : ''}${noTemplate ? ' --no-template' : ''}\`: ${rounds} rounds${other || theirs ? ', the servers taking turns in each' : ''}.
${
  noTemplate
    ? 'Every start of this build found no start-up template and bootstrapped the empty etcd object by object (keeping a template, as a first start does).'
    : "Every start of this build began from the start-up template (docs/envtest.md) that an unmeasured first start with envtest's settings kept, as every suite's start after a harness's first does."
}
Each round: a fresh, empty etcd (as envtest starts one per suite), envtest's
certificates and flags (docs/envtest.md), the bin exec'd with \`--help\` and run to its exit (envtest reads the help
for its flags before each start), then exec'd to serve, \`/healthz\`
probed every 10 ms as envtest probes it (no client certificate); then
\`GET /api/v1/namespaces/default\` as envtest's admin, its next step.
envtest itself polls every 100 ms, so it sees ready up to 100 ms later.
The goal: \`/healthz\` 200 within 300 ms of the exec. The phases are
timed by the arrival of the server's log lines; each row is its own median,
so the phases need not add up to the total. The machine is shared and its
load moves the milliseconds: compare the ratios, and the CPU time.${
  theirs
    ? `
Upstream's kube-apiserver v1.20.2 (built from source: docs/benchmarks.md, "How to run") took its turn in each round with the same files and
command line, and \`--insecure-port=0\`, which envtest adds when the help lists the flag, as 1.20's does; its log has no lines for the daemon's phases.`
    : ''
}

${head}
${row("envtest's `--help` before the start (exec to exit)", (r) => r.helpMs)}
${row('exec to the certificates read (node started, the bundle loaded, flags checked)', (r) => r.milestones.certificates, 'daemon')}
${row('then to etcd open (the etcd store loaded, etcd answered)', (r) => r.milestones.storage - r.milestones.certificates, 'daemon')}
${row('then to listening (bootstrap objects written, first controller passes)', (r) => r.milestones.listening - r.milestones.storage, 'daemon')}
${row('then to the first `/healthz` 200', (r) => r.healthzMs - r.milestones.listening, 'daemon')}
${row('exec to `/healthz` 200', (r) => r.healthzMs)}
${row('`--help` and the start to `/healthz` 200, one after the other (envtest waits for both)', (r) => r.helpMs + r.healthzMs)}
${row('CPU time used by then', (r) => r.cpuMs)}
${row('resident memory then', (r) => r.rssMb, 'any', 'MB')}
${row('exec to the `default` namespace read as the admin', (r) => r.namespaceMs)}

Where the time goes, from the phase rows and CPU profiles of single starts
(\`node --cpu-prof\`): node itself and the daemon's bundle, compiled from
its code cache and evaluated, before a flag is read (\`main.cjs --version\`
alone took 0.28 to 0.34 s against 0.08 to 0.12 s for a bare \`node\` on
this run's day: Node's own modules the daemon needs (TLS, HTTP/2, fetch's
classes) some 40 ms, reading the bundle some 20 ms and its code cache's
25 to 30 ms, then the daemon's modules some 60 ms, CEL's function tables
and zod's schemas the most); the etcd store's module
and etcd's first answer; then the listening phase. From a template, that
phase writes the 177 objects an earlier start bootstrapped (one object
of each kind per transaction, some 65 of them, sixteen in flight, encoded
but not read back; until 2026-11-26 a transaction each, some 100 ms, the
protobuf encoding half of it), begins every watch cache from those
objects (not read back from etcd), and runs start-up as a restart:
every post-start hook finds its objects in place and writes only what
differs (the \`kubernetes\` Service's port, the endpoints, the leases, the
client CA bundles); ClusterRole aggregation's first pass finds \`admin\`,
\`edit\` and \`view\` filled. In a profile of the phase after the
template's writes (100 µs samples), garbage collection takes some 12%,
the etcd client 8%, the rest spread thin (no part over 5%); the code runs
in V8's interpreter until listening, with
the young generation held at the size it grew to while the bundle
evaluated (the memory at ready, see the start-up section). Without a template (the first start with given settings, or
\`--no-template\`), some 180 objects are created and 40 updated through
the whole write path instead (RBAC's 123 roles and bindings, the local
APIServices and their status, the flow schemas and priority levels, the
priority classes, the system namespaces): in seven such rounds of this
run's day, /healthz came after 1.02× the time of the build before
templates, the listening phase 0.96× (keeping the template is done a
second after serving, from the revision start-up left). Answering
\`/healthz\` before the hooks are through would break what upstream's
\`/healthz\` means (its post-start hooks) for clients that create objects
right after. The goal of 300 ms, by this run: ${goal(mine!)}.

Changes of 2026-11-28, against the build before them (9 rounds, the
builds taking turns, load average below 1): on etcd the young generation
grows while the bundle evaluates (8 MiB) and is held after, where it was
held at 1 MiB from the first line (runtimes/node/daemon/young-generation.ts).
Collected some thirty times before listening, the small one had V8 set its
first limit for the old generation low, and start-up then ran a full
collection, its concurrent marking competing for the two cores: \`/healthz\`
after 270 against 304 ms (0.89×), the listening phase 94 against 122 ms,
CPU by then 240 against 290 ms (0.83×), 88 against 84 MB resident then. The
embedded store's start ran no full collection either way (spawn to
\`/readyz\` 0.97×, 90.0 against 91.1 MB): there the young generation stays
held from the first line. Grown later instead (held while the bundle
evaluates, then free up to a few MiB): no faster than the build before.

Changes of 2026-11-27, against the build before them (9 rounds, the
builds taking turns, load average 1.1 to 1.5): \`/healthz\` after 587
against 626 ms (0.94×), CPU by then 490 against 570 ms (0.86×).

- The daemon listens as soon as its certificates are read, before the
  store opens (docs/operations.md, "The daemon"): the connection and TLS
  handshake of envtest's first poll happen while start-up writes, and its
  request waits, answered as soon as the daemon serves: the first 200
  came 11 against 27 ms after the daemon said it serves. envtest itself
  polls every 100 ms, so its own wait shrinks by up to a poll's interval
  more than this bench (which probes every 10 ms) shows.
- Node compiles its built-in modules from a code cache made under V8's
  default flags, and V8 takes a cache only under the flags it was made
  with: while start-up held V8's compilers off, every built-in module
  loaded was compiled from its source, twice the time. The bin now loads
  the ones a start needs before it sets the flags
  (runtimes/node/daemon/startup-builtins.ts): the certificates are read
  285 against 331 ms after the exec (0.86×), \`main.cjs --version\` in
  0.28 to 0.34 against 0.32 to 0.38 s.
- A service account key is imported under the algorithm its DER names
  (an ECDSA key, as envtest's, was first tried as RSA; a P-384 or P-521
  key as P-256 too): a P-256 key loads in 3.2 against 3.7 ms.
- After this table: the bin's work on serving (V8's compilers let go)
  now comes after the requests that waited are handed over (the first
  200 came 6 against 10 ms after the daemon said it serves, nine rounds
  taking turns), and the local APIServices are compared with the watch
  cache's copy rather than read from etcd one by one (a start from a
  template asks etcd 41 Ranges against 61).

Changes of 2026-11-26 from 13:10 UTC, each against the build before it:

- envtest runs the bin with \`--help\` before every start (to decide on
  \`--insecure-port\`), and that exec loaded the whole daemon to print a
  text that depends on the flag table alone. The build now writes the help
  beside the daemon's script (\`daemon-help.txt\`), and the bins' file prints
  it for \`--help\` or \`-h\` alone without loading the daemon
  (runtimes/node/daemon/kept-help.ts); any other command line asking for
  help is parsed by the daemon as before, and prints the same text. In
  a run of nine rounds (13:53 UTC, \`/healthz\` after 529 against 673 ms) the help took 131 against 328 ms
  (0.40×), and the help and the start together, what envtest waits for
  before its first poll can succeed, 660 against 986 ms (0.67×); in runs of
  seven rounds before and after it, 0.44× and 0.52×, 0.74× and 0.76×. The
  start after the help came sooner too (0.79× to 0.91×), though nothing in
  it changed: started alone, six alternating starts of each build gave
  \`/healthz\` at a median of 533 against 586 ms, within the noise; the
  build before ran its help's 250 to 330 ms of CPU right before each start.

The change before (2026-11-26, from 11:30 UTC):

- A template goes to etcd one object of each kind per transaction (some
  65 transactions for envtest's 177 objects, against one each), so that no
  two objects of one resource share a revision: in nine rounds taking
  turns with the build before, the listening phase 0.91×, \`/healthz\`
  0.94×, CPU 0.92×.
- The garbage collector starts at the first object that names an owner
  or carries its finalizers, rather than listing and watching every
  resource at start-up (a fresh envtest cluster has no such object).
- The bins run \`main.cjs\`, the bin bundled as CommonJS: Node sets up no
  ES module loader (10 to 17 ms of \`--version\` in forty alternating runs).
- The three together, against the build this session began from: in two
  runs of seven rounds \`/healthz\` after 0.90× and 0.91× the time, CPU
  0.88× and 0.92×, the listening phase 0.83× and 0.93× (495 against 548 ms
  in the first, 622 against 687 ms in the second); in two runs of nine
  rounds later, on a machine slower for both builds (600 to 975 ms a
  round), 0.99× and 0.92× the time, CPU 1.02× and 0.97×. The run of 13:53 UTC
  above is the last of them.

The change before (2026-11-26, from 09:30 UTC):

- A start whose empty store was given its template whole no longer runs
  the post-start hooks that write fixed objects (the system priority
  classes, priority and fairness's configuration, the RBAC policy): the
  template holds them as those hooks left them. Before, each such start
  read the policy's ~120 objects back and compared them rule by rule, and
  read each flow schema from etcd, to write nothing.
- Priority and fairness rebuilds its configuration only when the stored
  objects changed (start-up handed it the same ones three times).
- In two runs of nine rounds against the build this session began from
  (load average 1.3 to 2): \`/healthz\` after 1.03× and 0.97× the time,
  CPU 0.97× and 0.94×, the listening phase 0.96× and 0.91×. The daemon on
  its embedded store was 84.2 to 84.7 MiB at ready against 88.2 to 89.3
  MiB (three starts of each build, twice, taking turns; which change gave
  it was not measured, and the storage-object count now coming a second
  after ready may be part of it).

Earlier (2026-11-26, at 08:00 UTC and after):

- ClusterRole aggregation's first pass is start-up's last phase, where the
  server runs it: \`admin\`, \`edit\` and \`view\` are filled before the
  server listens, and a template holds them filled. Before, every start
  from a template had the aggregation read and apply the three roles
  again right after listening, while \`/healthz\` was being probed.
- A template written whole (each object at one of the revisions right
  after the empty store's: nobody else wrote in between) primes the watch
  caches: their first lists are answered from the objects written, not
  read back from etcd and decoded (145 Ranges asked of etcd by a start
  against 205).
- In five runs of nine rounds against the build before (each round on a
  fresh etcd, the builds taking turns): \`/healthz\` after 0.73× to 0.90×
  the time in four of them (1.14× in a first, noisier one), the listening
  phase 0.70× to 0.91×, CPU 0.75× to 0.94×. A first start (\`--no-template\`,
  the build before without its template too) now writes the aggregated
  roles before it listens: /healthz after 1.04× and 1.07× the time in two
  runs of seven rounds, CPU 1.03× and 1.12×, its listening phase 1.13× to
  1.17× and its first /healthz answered in half the time after listening.

Before that (2026-11-26):

- Start-up templates on an empty store (docs/envtest.md, docs/storage.md):
  the first start with given settings keeps what start-up stored; later
  starts with the same settings on an empty etcd write it and start as a
  restart does, the objects made their own (new uids, this start's times).
  The settings leave out what a harness changes every start (port,
  certificates and keys, the client CA, the issuer, where etcd is).
- Start-up's own readers take each resource from its watch cache's first
  load instead of reading etcd beside it: the informers list at
  resourceVersion 0, as client-go's reflector does, and the RBAC policy's
  hook lists from the cache; a cache read during the first load waits for
  it. Before, each bootstrap object was decoded two or three times over.
- In runs of this day against the build before (each round on a fresh
  etcd, the builds taking turns, the machine's load moving between runs):
  the listening phase in 0.57× to 0.77× the time, \`/healthz\` after 0.76×
  to 0.94×, CPU 0.67× to 0.90×.

Earlier (2026-11-26): ClusterRole aggregation starts once start-up's phases
are through (each aggregated role written once, after the policy); the
bin's code cache is taken three seconds after listening, with the request
paths of the first answers in it; a start loads neither the WebSocket
package nor child_process, and pino is inside the code-cached script.
Earlier still (2026-11-25): the etcd store's own HTTP/2 client connection instead
of Node's HTTP/2 module (whose streams cost some 165 µs each while the
compilers are held); the count of stored objects per resource after
start-up; each namespace looked for once by the RBAC policy; copies of
objects by a walk over their fields; start-up no longer waiting on the
watch cache for the service allocations, the system namespaces and the
priority classes (each such consistent read had waited for the cache to
hear of every write start-up made meanwhile).

Tried and left out: V8's compilers on from the start (TurboFan on made a
start use some 30% more CPU on two cores, its compilations competing with
start-up, and 10 MB more at ready; Sparkplug alone, no faster), and a
larger young generation (\`--max-semi-space-size\` 2 or 4 in three starts
each, 16 in one: no difference beyond the noise, up to 30 MB more at
ready; but a flag on node's command line also makes Node compile its own
modules from source, some 30 ms: see 2026-11-28 below). Watch streams on the connection of the writes: no faster to
start, and 6% more CPU per create under load (the daemon suite), so each
member has a second connection for them.
With etcd3 gone, Sparkplug on during start-up again: in seven
alternating envtest starts, /healthz after 0.95× the time and 0.93× the
CPU, but 1.7 MiB more resident (2 MiB on the embedded store), which the
memory at ready cannot spare; it stays held. Reading the bin's script
as Latin-1 from a Buffer rather than as UTF-8 text was first left out:
some 5 ms less, but 6 MiB more resident at ready, the Buffer waiting for
a full collection. Since 2026-11-26 the build writes its bundles in ASCII
alone (tools/bundle.ts), which Node's UTF-8 read copies at once (15 to
18 ms against 21 to 27 ms with its six micro signs); later that day a
Latin-1 read with the Buffer detached as soon as the string was made
cost no memory at ready, but six whole starts of each, taking turns,
answered \`/healthz\` no sooner (a median of 490 ms against 508 ms, within
the noise, the first log line later rather than sooner), so it was left
out again.
<!-- envtest-start: end -->`
}

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    timeline: { type: 'boolean', default: false },
    'no-template': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    upstream: { type: 'string', default: process.env['UPSTREAM_KUBE_APISERVER'] },
  },
})

const rounds = Number(values.rounds)
const buildStarter = (name: string, build: string): Starter => ({ name, command: daemonMainOf(build), extraArgs: [], build })
const starters: Starter[] = [buildStarter('this build', ROOT)]
if (values.baseline) starters.push(buildStarter('previous build', resolve(values.baseline)))
// envtest passes --insecure-port=0 to a binary whose help lists the flag, as 1.20's does.
if (values.upstream) starters.push({ name: 'upstream', command: resolve(values.upstream), extraArgs: ['--insecure-port=0'] })
const work = await mkdtemp(join(tmpdir(), 'apiserver-envtest-start-'))
try {
  const figures = new Map(starters.map(({ name }) => [name, [] as Round[]]))
  // Unmeasured: a first start after a build writes the bin's code cache.
  for (const starter of starters) if (starter.build) await once(starter, work)
  for (let r = 0; r < rounds; r++) {
    for (const starter of r % 2 ? [...starters].reverse() : starters) {
      const { name, build } = starter
      if (values['no-template'] && build) await forgetStartupTemplates(build)
      const round = await once(starter, work)
      figures.get(name)!.push(round)
      process.stderr.write(`round ${r + 1}, ${name}: /healthz ${round.healthzMs.toFixed(0)} ms, CPU ${round.cpuMs} ms, ${round.rssMb.toFixed(0)} MB, default namespace ${round.namespaceMs.toFixed(0)} ms\n`)
      if (values.timeline && r === rounds - 1) for (const [at, line] of round.timeline) process.stderr.write(`${at.toFixed(0).padStart(6)} ms  ${line}\n`)
    }
  }
  const section = render(starters, figures, rounds, values['no-template'])
  process.stdout.write(`${section}\n`)
  if (!values['no-write']) await replaceSection(ROOT, '<!-- envtest-start: begin -->', '<!-- envtest-start: end -->', section)
} finally {
  await rm(work, { recursive: true, force: true })
}
