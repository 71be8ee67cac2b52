/**
 * Start-up side by side in one run: this build against another one
 * (`--baseline <dir>`, a copy of an older commit's tree with its own
 * `npm run build`), fresh processes taking turns, medians of each.
 *
 * - in-process: a new `node` imports the built package (as Node resolves
 *   `import 'kube-apiserver-ts'`: the code-cached library script), calls
 *   `createApiServer()` and sends one request through `server.fetch` (which
 *   waits for start-up work); timed from the process's own time origin.
 * - daemon: `dist/runtimes/node/main.cjs` on the embedded store, from spawn to
 *   `/readyz` 200 over TLS, certificates and store from an earlier start;
 *   its resident memory (VmRSS) then. The same on etcd (one etcd server for
 *   the run, a key prefix per build) for the memory at ready.
 *
 * Beside wall time, the CPU time the process used by then: on a machine other
 * work shares, it moves much less than wall time.
 *
 *   node --import tsx test/bench/start.ts [--baseline DIR] [--rounds N] [--no-write]
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { stopDaemon, timedStart } from './daemon.js'
import { daemonMainOf, packageEntry } from './package-entry.js'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')

interface InProcessStart {
  importMs: number
  /** createApiServer() to the first answer. */
  firstAnswerMs: number
  /** Process time origin to the first answer. */
  totalMs: number
  cpuMs: number
}

interface DaemonReady {
  readyMs: number
  cpuMs: number
  /** VmRSS at the first /readyz 200, MiB. */
  rssMiB: number
}

const inProcessScript = (entry: string): string => `
const t0 = performance.now()
const { ADMIN_IDENTITY, createApiServer } = await import(${JSON.stringify(entry)})
const t1 = performance.now()
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))
await res.arrayBuffer()
const t2 = performance.now()
const cpu = process.cpuUsage()
process.stdout.write(JSON.stringify({ status: res.status, importMs: t1 - t0, firstAnswerMs: t2 - t1, totalMs: t2, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\\n')
process.exit(0)
`

function inProcessOnce(build: string): Promise<InProcessStart> {
  const entry = packageEntry(build)
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', inProcessScript(entry)], { cwd: build, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.once('error', fail)
    child.once('exit', (code) => {
      clearTimeout(timer)
      try {
        const figures = JSON.parse(out) as InProcessStart & { status: number }
        if (figures.status !== 200) throw new Error(`the first request answered ${figures.status}`)
        done(figures)
      } catch (err) {
        fail(new Error(`in-process start exited ${code}: ${String(err)} ${out}`))
      }
    })
  })
}

/** utime + stime of a process so far, from /proc (clock ticks of 10 ms on Linux). */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

async function daemonOnce(build: string, dir: string, storageFlags: string[] = []): Promise<DaemonReady> {
  const { running, start } = await timedStart([process.execPath, daemonMainOf(build), ...storageFlags], dir)
  try {
    return { readyMs: start.readyMs, cpuMs: await cpuMsOf(running.child.pid ?? 0), rssMiB: start.rssMiB }
  } finally {
    await stopDaemon(running.child)
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const ms = (value: number): string => `${value.toFixed(0)} ms`
/** Upstream's figures in the issue (288 / 319 MB) are decimal megabytes, as the daemon suite reports them. */
const mb = (mib: number): string => `${((mib * 1024 * 1024) / 1e6).toFixed(1)} MB`

interface Figures {
  inProcess: InProcessStart[]
  daemon: DaemonReady[]
  onEtcd: DaemonReady[]
}

/** Whether this build's median memory at ready is under a third of upstream's 288 MB, in words. */
function verdict(builds: Array<[string, string]>, figures: Map<string, Figures>, backend: 'daemon' | 'onEtcd', where: string): string {
  const mine = median(figures.get(builds[0]![0])![backend].map((s) => s.rssMiB))
  const megabytes = (mine * 1024 * 1024) / 1e6
  return megabytes < 96 ? `met ${where} (${mb(mine)})` : `not met ${where} (${mb(mine)}, ${(megabytes - 96).toFixed(1)} MB over)`
}

function render(builds: Array<[string, string]>, figures: Map<string, Figures>, rounds: number): string {
  const [mine, other] = builds.map(([name]) => figures.get(name)!)
  const row = (label: string, pick: (f: Figures) => number[], unit = ms): string => {
    const a = median(pick(mine!))
    const cells = [unit(a)]
    if (other) {
      const b = median(pick(other))
      cells.push(unit(b), `${(a / b).toFixed(2)}`)
    }
    return `| ${label} | ${cells.join(' | ')} |`
  }
  const head = other ? '| figure (median) | this build | previous build | this / previous |\n| --- | --- | --- | --- |' : '| figure (median) | this build |\n| --- | --- |'
  return `<!-- startup: begin -->
## Start-up

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'} (load average ${loadavg()[0]!.toFixed(1)} at the end),
Node ${process.version}. \`node --import tsx test/bench/start.ts${other ? ' --baseline <the previous build>' : ''}\`: ${rounds} rounds,
the builds taking turns in each, a fresh process for every figure. Compare the
ratio, not the milliseconds: the machine is shared and its load moves them.

${head}
${row('in-process: `import` of the package', (f) => f.inProcess.map((s) => s.importMs))}
${row('in-process: `createApiServer()` to the first answer', (f) => f.inProcess.map((s) => s.firstAnswerMs))}
${row('in-process: `import` plus `createApiServer()` to the first answer (goal: 150 ms)', (f) => f.inProcess.map((s) => s.importMs + s.firstAnswerMs))}
${row('in-process: process start to the first answer', (f) => f.inProcess.map((s) => s.totalMs))}
${row('in-process: CPU time used by the first answer', (f) => f.inProcess.map((s) => s.cpuMs))}
${row('daemon, embedded store: spawn to `/readyz` 200 (goal: 300 ms)', (f) => f.daemon.map((s) => s.readyMs))}
${row('daemon, embedded store: CPU time used by then', (f) => f.daemon.map((s) => s.cpuMs))}
${row("daemon, embedded store: resident memory at the first `/readyz` 200 (goal: under 96 MB, a third of upstream's 288 MB)", (f) => f.daemon.map((s) => s.rssMiB), mb)}
${row('daemon on etcd: spawn to `/readyz` 200', (f) => f.onEtcd.map((s) => s.readyMs))}
${row('daemon on etcd: resident memory at the first `/readyz` 200 (goal: under 96 MB)', (f) => f.onEtcd.map((s) => s.rssMiB), mb)}

The daemon rows are restarts: each start finds the store an earlier start
filled (so no start-up template applies; docs/envtest.md has a start on an
empty store).

What changed against the previous build (2026-11-26, later):

- Start-up's own readers take each resource from its watch cache's first
  load instead of reading the store beside it: the informers list at
  resourceVersion 0, as client-go's reflector does, and the RBAC policy's
  hook lists from the cache (the envtest section). On a restart every
  stored object was decoded two or three times during start-up; now about
  once. In three runs of this day, a restart on the embedded store took
  0.84× to 0.88× the time and 0.81× to 0.86× the CPU; on etcd 0.96× to
  1.00× the time (its round trips weigh more). The in-process rows run on the memory store, whose reads decode
  nothing: their ratios are this machine's noise (two runs of this day
  gave 1.09× and 1.30× for the CPU by the first answer; ten alternating
  processes each, 0.22 s against 0.21 s at the fastest).

Before that (2026-11-26, the daemon rows):

- The bin's code cache is taken when it is written (three seconds after
  listening, or at exit), with the start-up's V8 flags set again for that
  moment, rather than at listening: it holds the code of the first
  requests too (the filters, the handlers, the Node adapter), which every
  start compiled from source for its first answers, \`/readyz\` among them.
  The memory at ready is unchanged by it (a larger cache, whose bytecode
  the first requests would have made anyway).
- A start loads neither the WebSocket package (with zlib) nor
  child_process, and pino is inside the code-cached script; ClusterRole
  aggregation starts once start-up is through; informers and the garbage
  collector take the watch cache's objects as they are (the envtest
  section).
- The in-process rows share the core's changes (the informers' watches,
  the protobuf decoder, aggregation after start-up), which an empty
  in-process server barely runs: their ratios are within this machine's
  noise.

Before that (2026-11-26, the in-process rows):

- Under Node, \`import 'kube-apiserver-ts'\` (the in-process rows) runs
  the library as one classic script with a V8 code cache
  (\`runtimes/node/library.ts\`, docs/embedding.md), as the bin runs its
  daemon: Node 20 keeps no compile cache for ES modules, so every process
  compiled the library again, and each function again the first time it
  ran. The first import of each build, before the rounds, wrote the cache.
  \`./node\`'s own modules (the daemon, the Node adapter) are evaluated
  only when it is imported, and the KMS clients load gRPC and its proto
  loader with the first client rather than at import (some 100 ms of
  every import of \`./node\`). The first import also kept its server's
  start-up beside the script (docs/embedding.md, \`reuseStartup\`), so
  each round's \`createApiServer()\` began from it, as a test file's
  first server after the suite's first now does.

Earlier (2026-11-23, against f08d509):

- V8's compilers above its interpreter, TurboFan and Sparkplug, are held
  off until the daemon listens, as the young generation already was.
  Start-up ran many functions hot enough to be optimized (decoding stored
  objects, the RBAC reconciliation, walks of the type tables), mostly once;
  the compilations ran on V8's four worker threads, whose allocators kept
  the compiler's working memory, and the optimized code stayed in the heap.
  Sparkplug's baseline code weighs most on etcd, whose client's modules
  load from source, not from the code cache. Tried first from node's
  command line (embedded store): \`--no-opt\` gave 90.5 MB at ready against
  97.2 MB, \`--v8-pool-size=1\` 93.9 MB (a thread fewer, about 1.1 MB
  each), \`--no-sparkplug\` about 0.5 MB less, \`--optimize-for-size\`,
  \`--max-lazy\` and \`--single-threaded-gc\` nothing beyond the noise; on
  etcd, with TurboFan held, \`--no-sparkplug\` 93.4 MB against 96.9 MB.
  After the release V8 compiles what requests run as before; functions run
  hot at start-up are compiled when they are hot again
  (test/unit/runtimes/optimizing-compiler.test.ts). The code cache is taken
  before the flags change back, so later starts still use it. An operator's
  own compiler flags are left as given.
  CPU per GET against the previous build, side by side, with TurboFan held
  (\`node --import tsx test/bench/read-path.ts --baseline <the previous build> --only get\`,
  two runs, 2026-11-23 23:20 UTC, load average 3.9 and 5.8 at their ends): 0.92x, 1.27x,
  0.89x and 0.83x in the first, 0.88x, 0.88x, 1.12x and 1.14x in the second
  (previous ÷ this build, wrk and the Node client, embedded and etcd): both
  directions, no change out of the machine's noise. With Sparkplug held
  too (one run of the same command, 2026-11-23 23:33 UTC, load average
  4.7): 1.04x, 0.92x, 1.05x and 1.02x, the same.
- Not touched by this change: the in-process rows (they do not run the
  bin's main.js); they moved 0.76x to 0.88x in a run an hour before this
  one and 1.01x to 1.16x here, which is the machine's noise. The bin's CPU
  to \`/readyz\` was 0.77x with TurboFan alone held and is 1.04x here with
  Sparkplug held as well: interpreted start-up code may cost a little CPU,
  which two runs cannot separate from the noise. A third run (7 rounds,
  \`--no-write\`, 2026-11-23 23:36 UTC, load average 1.9): CPU to \`/readyz\`
  0.95x, memory at ready 88.8 MB against 99.3 MB (embedded) and 94.1 MB
  against 103.9 MB (etcd). CPU profiles of one warm start each
  (\`node --cpu-prof\`, to the daemon's exit) put 39% of this build's
  samples in the bundle's own code against 26% before, as the interpreter
  runs what optimized code ran; one profile each is too few to weigh against
  the CPU rows above.
- libsql's loader asked \`process.report.getReport()\` whether the C
  library is glibc (a full diagnostic report, some 1 MB kept and a few
  milliseconds); detect-libc, which libsql loads anyway, answers it from the
  dynamic linker's file, and on glibc the loader is given that answer.
- The inspector module loads with the first CPU profile and zlib with the
  first compressed audit backup, not at every start.

The memory goal (issue 18: under a third of upstream's 288 MB, 96 MB), by
this run: ${verdict(builds, figures, 'daemon', 'on the embedded store')};
${verdict(builds, figures, 'onEtcd', 'on etcd')}. What is resident at ready
on the embedded store, from \`/proc/<pid>/smaps\` before this change: 44 MB
of the node binary's own pages (a bare \`node -e\` touches 30 MB of them;
the rest is the built-in modules' code and OpenSSL, HTTP/2 and the other
parts the server uses), 34 MB of anonymous memory (the JavaScript heap, 29
MB of it: 8 MB bytecode, 4 MB the bundle's source), 8 MB of the C heap and
5 MB of libsql's native module. pino, measured by replacing it with a
stand-in, accounts for under 1 MB at ready, so it stays.
<!-- startup: end -->`
}

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    'no-write': { type: 'boolean', default: false },
  },
})
const rounds = Number(values.rounds)
const log = (text: string) => void process.stderr.write(`${text}\n`)
const builds: Array<[string, string]> = [['this build', ROOT]]
if (values.baseline) builds.push(['previous build', resolve(values.baseline)])
const work = await mkdtemp(join(tmpdir(), 'apiserver-start-'))
const etcd = await EtcdServer.start()
try {
  const figures = new Map(builds.map(([name]) => [name, { inProcess: [], daemon: [], onEtcd: [] } as Figures]))
  const dirs = new Map(builds.map(([name], i) => [name, join(work, `build-${i}`)]))
  const etcdFlags = new Map(builds.map(([name], i) => [name, [`--etcd-servers=${etcd.clientUrl}`, `--etcd-prefix=/build-${i}`]]))
  // A first start per build writes the certificates and creates the store; later starts reuse them, as a restart does.
  // A first import writes the library script's code cache, as a suite's first test file does after an install.
  for (const [name, build] of builds) {
    await inProcessOnce(build)
    await daemonOnce(build, dirs.get(name)!)
    await daemonOnce(build, dirs.get(name)!, etcdFlags.get(name))
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, build] of r % 2 ? [...builds].reverse() : builds) {
      log(`round ${r + 1}: ${name}`)
      const f = figures.get(name)!
      f.inProcess.push(await inProcessOnce(build))
      f.daemon.push(await daemonOnce(build, dirs.get(name)!))
      f.onEtcd.push(await daemonOnce(build, dirs.get(name)!, etcdFlags.get(name)))
    }
  }
  const section = render(builds, figures, rounds)
  process.stdout.write(`${section}\n`)
  if (!values['no-write']) await replaceSection(ROOT, '<!-- startup: begin -->', '<!-- startup: end -->', section)
} finally {
  await etcd.destroy()
  await rm(work, { recursive: true, force: true })
}
