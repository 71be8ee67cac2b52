/**
 * wrk (Debian's package) as the GET load: 2 threads, 32 connections,
 * over TLS with a bearer token. When wrk is missing the bench installs it
 * with apt-get if it runs as root, and otherwise says why the column is empty.
 */
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { median } from './load.js'

const run = promisify(execFile)

export interface WrkResult {
  perSecond: number
  requests: number
  /** Answers that were not 2xx/3xx, plus socket errors. */
  errors: number
  p50Ms: number
  p99Ms: number
}

function onPath(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return true
  } catch (err) {
    // wrk --version exits 1 after printing its version: only a spawn failure means it is missing.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT'
  }
}

/** Several wrk runs against one target as one: their requests over their time; the latencies, each run's median of them. */
export function combineWrk(runs: readonly WrkResult[]): WrkResult {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0)
  const seconds = runs.reduce((sum, r) => sum + r.requests / r.perSecond, 0)
  return {
    perSecond: requests / seconds,
    requests,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
  }
}

/** Undefined when wrk can be run; otherwise why not (said in the report instead of a figure). */
export function ensureWrk(log: (text: string) => void): string | undefined {
  if (onPath()) return undefined
  if (process.getuid?.() !== 0) return 'wrk is not installed and the bench does not run as root to install it (`apt-get install wrk`)'
  log('wrk is missing: installing it with apt-get install -y wrk …')
  try {
    execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 })
  } catch (err) {
    return `wrk is not installed and \`apt-get install -y wrk\` failed (${(err as Error).message.split('\n')[0]})`
  }
  return onPath() ? undefined : 'wrk is still not on PATH after `apt-get install -y wrk`'
}

/** wrk prints latencies as `1.23ms`, `456.00us` or `1.02s`. */
function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text)
  if (!m) return Number.NaN
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm']
  return Number(m[1]) * scale
}

export function parseWrk(out: string): WrkResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN)
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const socket = socketErrors ? socketErrors.slice(1).reduce((s, n) => s + Number(n), 0) : 0
  return {
    perSecond: num(/Requests\/sec:\s+([\d.]+)/),
    requests: num(/(\d+) requests in/),
    errors: (Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) || 0) + socket,
    p50Ms: toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99Ms: toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
  }
}

/** `wrk -t2 -c32 --latency` for `seconds` against one URL, with the bearer token. */
export async function wrkGet(url: string, token: string, seconds: number): Promise<WrkResult> {
  const args = ['-t2', '-c32', `-d${seconds}s`, '--latency', '-H', `Authorization: Bearer ${token}`, url]
  const { stdout } = await run('wrk', args, { timeout: (seconds + 30) * 1000 })
  return parseWrk(stdout)
}
