/**
 * The daemon as operators run it: `node dist/runtimes/node/main.cjs` with a
 * temporary --cert-dir and --data-dir (the embedded store, the daemon's
 * default storage) and a free port, measured from process start to
 * `/readyz` 200 over TLS with the admin client certificate, its resident
 * memory then, and request rates from a keep-alive HTTPS client on loopback.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { type LoadOptions, type LoadResult, runLoad } from './load.js'

export interface DaemonStart {
  /** Process start to /readyz 200, ms. */
  readyMs: number
  /** VmRSS at that moment, MiB. */
  rssMiB: number
}

export interface DaemonFigures {
  /** First start: the CA, serving and admin certificates are generated, the store is created. */
  firstStart: DaemonStart
  /** Later starts reuse the certificates in --cert-dir and the store in --data-dir. */
  warmStarts: DaemonStart[]
  gets: LoadResult
  creates: LoadResult
  /** VmRSS after the load, MiB. */
  rssAfterLoadMiB: number
}

interface Running {
  child: ChildProcess
  port: number
}

function vmRssMiB(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((text) => {
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(text)?.[1]
    return kb ? Number(kb) / 1024 : Number.NaN
  })
}

/** The daemon's certificates and its store, both in the run's temporary directory. */
const certDirIn = (dir: string): string => join(dir, 'pki')
const dataDirIn = (dir: string): string => join(dir, 'data')

/** What runs the daemon: the built Node entry's path, or a program and its leading arguments (the Bun binary, deno run ...). */
export type DaemonCommand = string | readonly string[]

/** Starts the daemon on a free port; resolves with the port from its "Serving on" log line (--logging-format=json on stderr). */
function startDaemon(command: DaemonCommand, dir: string): Promise<Running> {
  const [program, ...leading] = typeof command === 'string' ? [process.execPath, command] : command
  return new Promise((resolve, reject) => {
    const args = [...leading, '--secure-port', '0', '--bind-address', '127.0.0.1', '--cert-dir', certDirIn(dir), '--data-dir', dataDirIn(dir), '--logging-format=json']
    const child = spawn(program!, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    const log: string[] = []
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the daemon did not listen within 20 s:\n${log.join('\n')}`))
    }, 20_000)
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the daemon exited with ${code}:\n${log.join('\n')}`)))
    createInterface({ input: child.stderr! }).on('line', (line) => {
      log.push(line)
      try {
        const entry = JSON.parse(line) as { port?: unknown; url?: unknown }
        if (typeof entry.port === 'number' && typeof entry.url === 'string') {
          clearTimeout(timer)
          resolve({ child, port: entry.port })
        }
      } catch {
        // Not JSON: keep it for the error message.
      }
    })
  })
}

export async function stopDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 6000)
  await exited
  clearTimeout(timer)
}

function call(agent: Agent, port: number, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' }
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
      res.once('error', reject)
    })
    req.once('error', reject)
    req.end(body)
  })
}

async function adminAgent(dir: string, maxSockets: number): Promise<Agent> {
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(certDirIn(dir), f), 'utf8')))
  return new Agent({ keepAlive: true, maxSockets, ca, cert, key })
}

/** One start, timed from spawn until /readyz answers 200. Leaves the daemon running. */
export async function timedStart(main: DaemonCommand, dir: string): Promise<{ running: Running; start: DaemonStart }> {
  const t0 = performance.now()
  const running = await startDaemon(main, dir)
  const agent = await adminAgent(dir, 1)
  try {
    for (let attempt = 0; ; attempt++) {
      const status = await call(agent, running.port, 'GET', '/readyz').catch(() => 0)
      if (status === 200) break
      if (attempt > 200) throw new Error(`/readyz kept answering ${status}`)
      await new Promise((r) => setTimeout(r, 10))
    }
    const readyMs = performance.now() - t0
    return { running, start: { readyMs, rssMiB: await vmRssMiB(running.child.pid ?? 0) } }
  } finally {
    agent.destroy()
  }
}

const WARM_UP = 2000
const GET_SET = 200

const configMap = (name: string): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value' } })

export async function measureDaemon(opts: { main: string; warmStarts: number; load: LoadOptions }): Promise<DaemonFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-bench-'))
  const started: ChildProcess[] = []
  try {
    const first = await timedStart(opts.main, dir)
    started.push(first.running.child)
    await stopDaemon(first.running.child)
    const warmStarts: DaemonStart[] = []
    let last = first.running
    for (let i = 0; i < opts.warmStarts; i++) {
      const warm = await timedStart(opts.main, dir)
      started.push(warm.running.child)
      warmStarts.push(warm.start)
      last = warm.running
      if (i < opts.warmStarts - 1) await stopDaemon(warm.running.child)
    }

    // The load runs against the last daemon started.
    const agent = await adminAgent(dir, opts.load.concurrency)
    const base = '/api/v1/namespaces/default/configmaps'
    try {
      // Warm-up as in-process.ts: the objects GETs read, and time for the JIT on both ends.
      const warmUp = { total: WARM_UP, concurrency: opts.load.concurrency, maxSeconds: 10 }
      await runLoad(warmUp, async (i) => (await call(agent, last.port, 'POST', base, configMap(`warm-${i}`))) === 201)
      await runLoad(warmUp, async (i) => (await call(agent, last.port, 'GET', `${base}/warm-${i % GET_SET}`)) === 200)
      const gets = await runLoad(opts.load, async (i) => (await call(agent, last.port, 'GET', `${base}/warm-${i % GET_SET}`)) === 200)
      const creates = await runLoad(opts.load, async (i) => (await call(agent, last.port, 'POST', base, configMap(`bench-${i}`))) === 201)
      const rssAfterLoadMiB = await vmRssMiB(last.child.pid ?? 0)
      return { firstStart: first.start, warmStarts, gets, creates, rssAfterLoadMiB }
    } finally {
      agent.destroy()
    }
  } finally {
    await Promise.all(started.map(stopDaemon))
    await rm(dir, { recursive: true, force: true })
  }
}

/** Removes the start-up templates kept beside a build's bin (`<build>/dist/runtimes/node`): its next start on an empty store bootstraps in full. */
export async function forgetStartupTemplates(build: string): Promise<void> {
  const dir = join(build, 'dist', 'runtimes', 'node')
  await Promise.all((await readdir(dir)).filter((f) => f.includes('.startup-')).map((f) => rm(join(dir, f), { force: true })))
}
