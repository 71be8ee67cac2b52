/**
 * Start-up side by side in one run: this build against another one
 * (`--baseline <dir>`, a copy of an older commit's tree with its own
 * `npm run build`), fresh processes taking turns, medians of each.
 *
 * - in-process: a new `node` imports the built package, calls
 *   `createApiServer()` and sends one request through `server.fetch` (which
 *   waits for start-up work); timed from the process's own time origin.
 * - daemon: `dist/runtimes/node/main.js` on the embedded store, from spawn to
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
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { stopDaemon, timedStart } from './daemon.js'
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
  const entry = pathToFileURL(join(build, 'dist', 'core', 'index.js')).href
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
  const { running, start } = await timedStart([process.execPath, join(build, 'dist', 'runtimes', 'node', 'main.js'), ...storageFlags], dir)
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

What changed against the previous build:

- The bin runs the daemon as one classic script
  (dist/runtimes/node/daemon-script.cjs) with a V8 code cache beside it
  (\`daemon-script.cjs.v8-cache\`), which the first start writes once it
  listens, so the cache holds every function start-up ran. Later starts take
  compiled code from it instead of parsing and compiling the bundle. V8
  rejects a cache made by another build, V8 version or flag set, and the
  start then compiles as before and writes a new one; a read-only install
  keeps none. (Node 20 keeps no compile cache for ES modules, hence the
  classic script.) The package's own \`import\` is unchanged.
- V8's young generation stays at its initial 1 MiB semi-space until the
  daemon listens and grows again from then on: start-up keeps most of what
  it allocates, which made V8 grow it to 16 MiB a semi-space (32 MiB
  resident, mostly empty) by the first \`/readyz\`. GET and LIST CPU per
  request side by side were unchanged (read-path bench).
- The bundle's source is kept one byte a character in V8's heap: a Greek
  mu in a duration pattern and dashes in kept comments had made three
  chunks (3.3 MB) two bytes a character.
- A daemon on etcd no longer loads libsql's native module (about 5 MB
  resident).
- Flow schemas and admission policies sort by name as Go compares strings
  instead of with \`localeCompare\`, which loaded ICU's collation tables at
  every start (about 2 MB resident at ready).
- The daemon's script file is the wrapping function itself, so V8 is given
  the text as read and holds no second copy of it.

The goals (issue 18), by this run: none of the three is met. The bin's
start costs 0.86x the CPU time it did (0.75x and 0.85x in two earlier runs
today) and its memory at ready is 0.83x on the embedded store and 0.76x on
etcd, but the embedded store's 98.6 MB is still 2.6 MB over a third of
upstream's (96 MB), and on etcd, where the gRPC client and etcd3 load (some
20 MB), 107 MB is well over it. The bin's CPU time to \`/readyz\` alone is
above 300 ms, so its wall time cannot be under it on this machine. What a
warm start still spends, from a CPU profile: Node's own bootstrap and
built-in modules (undici for the first \`Response\`, the crypto key imports
of the serving certificate), the garbage collector (more scavenges while
the young generation is held small), reading and decoding the stored
objects and the RBAC reconciliation of a restart. The in-process figures are not changed by
this work (their rows swing with the load: ten alternating starts of just
that figure afterwards gave 313 ms of CPU against 321 ms, 0.97x):
the package's \`import\` is still an ES module compiled at every start,
which Node 20 cannot cache; a code cache for it would mean shipping the
library as a classic script too (measured in a trial: compile from 90 ms to
14 ms, the process's CPU to the first answer from about 355 ms to 245 ms),
which changes the package's module format and is left for a decision.
Tried and dropped: \`minifyWhitespace\` for the bundle (no CPU change in
alternating starts, 1.5 MB less memory, stack traces on one line).
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
  for (const [name, build] of builds) {
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
