/**
 * Starts the real daemon (the built `apiserver` bin) over TLS on a free
 * loopback port, and runs the kubectl on PATH against it with the
 * generated admin kubeconfig, as a user would.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { parse } from 'yaml'

/** How long a daemon may take to answer /readyz before the test gives up on it. */
const READY_WITHIN_MS = 60_000
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')
export const BIN = join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')

/** Bun from the dev dependencies, running the daemon's Bun entry. */
export const BUN_DAEMON: readonly string[] = [join(ROOT, 'node_modules', '.bin', 'bun'), join(ROOT, 'runtimes', 'bun', 'main.ts')]

/** The README's Deno command line, offline from this checkout's node_modules, with the entry's absolute path. */
export const DENO_DAEMON: readonly string[] = [
  join(ROOT, 'node_modules', '.bin', 'deno'),
  'run',
  '--sloppy-imports',
  '--node-modules-dir=manual',
  '--allow-read',
  '--allow-write',
  '--allow-net',
  '--allow-env',
  '--allow-sys',
  join(ROOT, 'runtimes', 'deno', 'main.ts'),
]

/**
 * What runs the daemon when a test does not say: the built Node daemon, or,
 * with E2E_RUNTIME=bun or deno, that runtime's entry, so any e2e file can be
 * run against another runtime by hand.
 */
function defaultCommand(): readonly string[] | undefined {
  const runtime = process.env['E2E_RUNTIME']
  if (runtime === 'bun') return BUN_DAEMON
  if (runtime === 'deno') return DENO_DAEMON
  if (runtime && runtime !== 'node') throw new Error(`E2E_RUNTIME=${runtime}: expected node, bun or deno`)
  return undefined
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address ? address.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface KubectlResult {
  code: number
  stdout: string
  stderr: string
}

export interface DaemonStartOptions {
  dir?: string
  port?: number
  bindAddress?: string
  command?: readonly string[]
}

/** The daemon could not listen: its port was taken meanwhile. */
class PortTaken extends Error {}

export class Daemon {
  private constructor(
    readonly process: ChildProcess,
    readonly dir: string,
    readonly port: number,
    readonly logs: string[],
  ) {}

  get certDir(): string {
    return join(this.dir, 'pki')
  }

  get kubeconfig(): string {
    return join(this.certDir, 'admin.kubeconfig')
  }

  get dataDir(): string {
    return join(this.dir, 'data')
  }

  /**
   * Starts the daemon with its certificates and embedded store in a fresh
   * directory, or in `opts.dir` to restart on what an earlier daemon left.
   */
  static async start(extraArgs: string[] = [], opts: DaemonStartOptions = {}): Promise<Daemon> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Daemon.startOn(opts.port ?? (await freePort()), extraArgs, opts)
      } catch (err) {
        // A port found free can be taken before the daemon binds it (the ephemeral port of some process's
        // outgoing connection): another is picked, unless the test named the port.
        if (!(err instanceof PortTaken) || opts.port !== undefined || attempt >= 3) throw err
      }
    }
  }

  private static async startOn(port: number, extraArgs: string[], opts: DaemonStartOptions): Promise<Daemon> {
    // The built Node daemon, unless the test runs another runtime's entry or binary.
    const command = opts.command ?? defaultCommand()
    const [program, ...programArgs] = command ?? [process.execPath, BIN]
    if (!command && !existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`)
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'apiserver-e2e-'))
    const args = [
      ...programArgs,
      `--secure-port=${port}`,
      `--bind-address=${opts.bindAddress ?? '127.0.0.1'}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--data-dir=${join(dir, 'data')}`,
      ...extraArgs,
    ]
    const child = spawn(program!, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const logs: string[] = []
    child.stdout?.on('data', (d) => logs.push(String(d)))
    child.stderr?.on('data', (d) => logs.push(String(d)))
    const daemon = new Daemon(child, dir, port, logs)
    // A bound, not a measure: on a loaded machine start-up takes seconds; a daemon that never gets ready fails here.
    const deadline = Date.now() + READY_WITHIN_MS
    for (;;) {
      if (child.exitCode !== null) {
        const message = `the daemon exited with ${child.exitCode}:\n${logs.join('')}`
        if (!message.includes('EADDRINUSE')) throw new Error(message)
        // Started again on another port, in a directory of its own.
        if (!opts.dir) rmSync(dir, { recursive: true, force: true })
        throw new PortTaken(message)
      }
      if (existsSync(daemon.kubeconfig) && (await daemon.kubectl('get', '--raw', '/readyz')).stdout === 'ok') return daemon
      if (Date.now() > deadline) {
        await daemon.stop()
        throw new Error(`the daemon was not ready within ${READY_WITHIN_MS / 1000}s:\n${logs.join('')}`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /** Runs kubectl with the admin kubeconfig and a private cache. */
  kubectl(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', this.kubeconfig, ...args],
        { env: { ...process.env, HOME: this.dir, KUBECACHEDIR: join(this.dir, 'cache') }, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
          resolve({ code, stdout: String(stdout), stderr: String(stderr) })
        },
      )
    })
  }

  /** Runs kubectl with `input` on its stdin (exec -i, attach -i); killed if it runs past 30 s. */
  kubectlWithInput(input: string, ...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, ...args], {
        env: { ...process.env, HOME: this.dir, KUBECACHEDIR: join(this.dir, 'cache') },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += String(d)))
      child.stderr.on('data', (d) => (stderr += String(d)))
      const guard = setTimeout(() => child.kill('SIGKILL'), 30_000)
      child.on('close', (code) => {
        clearTimeout(guard)
        resolve({ code: code ?? -1, stdout, stderr })
      })
      child.stdin.end(input)
    })
  }

  /**
   * POSTs a YAML body as the admin of the daemon's kubeconfig: kubectl sends
   * JSON whatever the file, so a YAML body takes a client of its own.
   */
  postYaml(path: string, body: string): Promise<{ status: number; text: string }> {
    const config = parse(readFileSync(this.kubeconfig, 'utf8')) as {
      clusters: [{ cluster: { server: string; 'certificate-authority-data': string } }]
      users: [{ user: { 'client-certificate-data': string; 'client-key-data': string } }]
    }
    const { cluster } = config.clusters[0]
    const { user } = config.users[0]
    const pem = (data: string) => Buffer.from(data, 'base64')
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, cluster.server),
        {
          method: 'POST',
          headers: { 'content-type': 'application/yaml' },
          ca: pem(cluster['certificate-authority-data']),
          cert: pem(user['client-certificate-data']),
          key: pem(user['client-key-data']),
          timeout: 60_000,
        },
        (res) => {
          let text = ''
          res.on('data', (d) => (text += String(d)))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
        },
      )
      req.on('timeout', () => req.destroy(new Error('no answer within 60 s')))
      req.on('error', reject)
      req.end(body)
    })
  }

  /** Runs kubectl and fails the test with its stderr unless it exits 0; its stdout. */
  async ok(...args: string[]): Promise<string> {
    const r = await this.kubectl(...args)
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`)
    return r.stdout
  }

  /** Writes a manifest into the daemon's directory; its path. */
  manifest(name: string, text: string): string {
    const file = join(this.dir, name)
    writeFileSync(file, text)
    return file
  }

  /** Starts a long-running kubectl (get -w) and hands back its output as it arrives. */
  kubectlStream(...args: string[]): { child: ChildProcess; output: () => string } {
    let out = ''
    const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, ...args], {
      env: { ...process.env, HOME: this.dir, KUBECACHEDIR: join(this.dir, 'cache') },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout?.on('data', (d) => {
      out += String(d)
    })
    child.stderr?.on('data', (d) => {
      out += String(d)
    })
    return { child, output: () => out }
  }

  /** SIGKILL, as a crash would end it; the directory stays for a restart. */
  async kill(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()))
    this.process.kill('SIGKILL')
    await exited
  }

  /** SIGTERM and wait for the exit code, keeping the directory for a restart. */
  async terminate(): Promise<number | null> {
    if (this.process.exitCode !== null) return this.process.exitCode
    const exited = new Promise<number | null>((resolve) => this.process.once('exit', (code) => resolve(code)))
    this.process.kill('SIGTERM')
    const code = await Promise.race([exited, giveUpAfter(10_000)])
    if (code === null) {
      this.process.kill('SIGKILL')
      await exited
    }
    return code
  }

  /** SIGTERM, then wait for the exit code. */
  async stop(): Promise<number | null> {
    // A daemon killed by a signal has no exit code, and will not exit again.
    if (this.process.exitCode === null && this.process.signalCode === null) {
      const exited = new Promise<number | null>((resolve) => this.process.once('exit', (code) => resolve(code)))
      this.process.kill('SIGTERM')
      const code = await Promise.race([exited, giveUpAfter(10_000)])
      if (code === null) this.process.kill('SIGKILL')
      rmSync(this.dir, { recursive: true, force: true })
      return code
    }
    rmSync(this.dir, { recursive: true, force: true })
    return this.process.exitCode
  }
}

/** Resolves null after `ms`, without keeping the test process alive that long once everything else is done. */
function giveUpAfter(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms).unref())
}

/** Polls until `check` passes or the deadline ends; the last failure is rethrown. */
export async function eventually(check: () => Promise<void> | void, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      await check()
      return
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}
