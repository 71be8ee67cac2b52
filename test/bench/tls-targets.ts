/**
 * What the daemon suite drives: the built daemon over TLS with a static
 * bearer token (on the embedded store or on etcd), and "the limit", a Node
 * TLS server answering every request with one fixed body. Each runs in its
 * own process, so its CPU time and resident memory are its own.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

export const TOKEN = 'bench-daemon-suite-token'

export type Backend = 'embedded' | 'etcd'

export interface TlsTarget {
  label: string
  port: number
  pid: number
  /** Keep-alive agent for request loads. */
  agent: Agent
  /** Spawn to the first `/readyz` 200, ms (the limit: spawn to listening). */
  readyMs: number
  stop: () => Promise<void>
}

export interface DaemonTarget extends TlsTarget {
  backend: Backend
  /** Where the daemon keeps its keys in etcd (`--etcd-prefix`); empty on the embedded store. */
  etcdPrefix: string
  certDir: string
}

/** VmRSS of a process now, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(text)?.[1]
  return kb ? Number(kb) / 1024 : Number.NaN
}

/** The process's user and system CPU time so far, ms (/proc/<pid>/stat, in clock ticks of 10 ms). */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** One request with the bearer token; resolves with the status once the body is read in full. */
export function call(agent: Agent, port: number, method: string, path: string, body?: string): Promise<number> {
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers, rejectUnauthorized: false }, (res) => {
      res.resume()
      res.once('end', () => done(res.statusCode ?? 0))
      res.once('error', fail)
    })
    req.once('error', fail)
    req.end(body)
  })
}

export function fetchText(agent: Agent, port: number, path: string): Promise<string> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${TOKEN}` }, rejectUnauthorized: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.once('end', () => done(text))
      res.once('error', fail)
    })
    req.once('error', fail)
    req.end()
  })
}

/** Spawns `node <node…> <main> <args>`; resolves with the port its first JSON log line with `port` and `url` names. */
export function startListening(main: string, args: string[], node: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...node, main, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    const log: string[] = []
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`${main} did not listen within 30 s:\n${log.join('\n')}`))
    }, 30_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      fail(new Error(`${main} exited with ${code}:\n${log.join('\n')}`))
    })
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (log.length < 200) log.push(line)
      try {
        const entry = JSON.parse(line) as { port?: unknown; url?: unknown }
        if (typeof entry.port === 'number' && typeof entry.url === 'string') {
          clearTimeout(timer)
          done({ child, port: entry.port })
        }
      } catch {
        // Not JSON: kept for the error message.
      }
    })
  })
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 8000)
  await exited
  clearTimeout(timer)
}

export interface DaemonOptions {
  /** The built entry, dist/runtimes/node/main.cjs. */
  main: string
  backend: Backend
  /** A fresh directory for its certificates, token file and store. */
  dir: string
  etcdUrl?: string
  /** Passed to node: `--cpu-prof` writes a profile there when the daemon stops. */
  cpuProfDir?: string
  maxSockets: number
  /** The client presents the admin's certificate (from --cert-dir), which the daemon takes before the token. */
  clientCertificate?: boolean
}

export async function startDaemon(label: string, opts: DaemonOptions): Promise<DaemonTarget> {
  await mkdir(opts.dir, { recursive: true })
  const tokens = join(opts.dir, 'tokens.csv')
  await writeFile(tokens, `${TOKEN},bench-admin,bench-admin,"system:masters"\n`)
  const certDir = join(opts.dir, 'pki')
  const etcdPrefix = opts.backend === 'etcd' ? `/${label.replace(/\W+/g, '-')}` : ''
  const args = ['--secure-port', '0', '--bind-address', '127.0.0.1', '--cert-dir', certDir, '--token-auth-file', tokens, '--logging-format=json']
  if (opts.backend === 'etcd') args.push('--etcd-servers', opts.etcdUrl!, '--etcd-prefix', etcdPrefix)
  else args.push('--data-dir', join(opts.dir, 'data'))
  const node = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : []
  const t0 = performance.now()
  const { child, port } = await startListening(opts.main, args, node)
  const identity = opts.clientCertificate ? { cert: await readFile(join(certDir, 'admin.crt')), key: await readFile(join(certDir, 'admin.key')) } : {}
  const agent = new Agent({ keepAlive: true, maxSockets: opts.maxSockets, ...identity })
  const stop = async () => (agent.destroy(), await stopChild(child))
  try {
    for (let i = 0; ; i++) {
      if ((await call(agent, port, 'GET', '/readyz').catch(() => 0)) === 200) break
      if (i > 3000) throw new Error(`${label}: /readyz never answered 200`)
      await new Promise((r) => setTimeout(r, 5))
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { label, backend: opts.backend, etcdPrefix, certDir, port, pid: child.pid ?? 0, agent, readyMs: performance.now() - t0, stop }
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

/** The limit: serves `body` (a GET's answer) with the certificate a daemon wrote to `certDir`. */
export async function startLimitServer(dir: string, certDir: string, body: string, maxSockets: number): Promise<TlsTarget> {
  await mkdir(dir, { recursive: true })
  const main = join(dir, 'limit-server.mjs')
  const bodyFile = join(dir, 'limit-body.json')
  await writeFile(main, LIMIT_SERVER)
  await writeFile(bodyFile, body)
  const t0 = performance.now()
  const { child, port } = await startListening(main, [join(certDir, 'apiserver.crt'), join(certDir, 'apiserver.key'), bodyFile], [])
  const agent = new Agent({ keepAlive: true, maxSockets })
  return {
    label: 'the limit',
    port,
    pid: child.pid ?? 0,
    agent,
    readyMs: performance.now() - t0,
    stop: async () => (agent.destroy(), await stopChild(child)),
  }
}
