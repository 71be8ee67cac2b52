/**
 * The daemon's threads other than the serving one, below it (Linux, where a
 * priority belongs to a thread), so that when every core is busy a request
 * is served first; a request is served only on the serving thread.
 *
 * The YAML worker, which decodes what clients send, goes lowest: nice 19
 * (`os.setPriority` takes a thread id on Linux) and, where util-linux's
 * `chrt` is installed, the SCHED_IDLE policy. A nice value only weighs a
 * thread's share, and the scheduler may let a nice-19 thread finish its
 * slice (up to milliseconds) before the serving thread, woken by a request,
 * gets the core; a SCHED_IDLE thread gives the core up as soon as any other
 * thread wants it. Node has no call for a thread's policy, hence the program.
 *
 * V8's helpers (the optimizing compiler, concurrent garbage collection),
 * libuv's pool and native libraries' threads go to nice 10: below the
 * serving thread, which the fuzz suite's worst inputs showed waiting for
 * the core behind them with the daemon on one core, but not starved, since
 * the serving thread depends on their work. Under SCHED_IDLE or nice 19
 * (as they once were), with the cores kept busy by other processes, the
 * optimizing compiler's jobs waited, the code stayed as first compiled, and
 * a GET cost the daemon 1.5 to 2 times the CPU (docs/benchmarks.md,
 * "Background threads on a busy machine" and "GET latency under hostile
 * input").
 *
 * Elsewhere (macOS, Windows) a priority is the process's: nothing is changed.
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/** The nice value of the YAML worker: the lowest priority a thread can lower itself to. */
export const YAML_WORKER_NICE = 19

/** The nice value of V8's and libuv's threads: below the serving thread, yet with a share of a busy core. */
export const HELPER_NICE = 10

/** Where util-linux installs `chrt`; looked up by absolute path, never through PATH. */
const CHRT_PATHS = ['/usr/bin/chrt', '/bin/chrt']

/** A `chrt` that has not answered within this long is given up on: the thread keeps nice 19. */
const CHRT_TIMEOUT_MS = 5000

/** The calling thread's id on Linux (`/proc/thread-self` names it); undefined elsewhere. */
export function linuxThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(id) && id > 0 ? id : undefined
  } catch {
    return undefined
  }
}

/** Lowers one thread of this process to `nice` (never raises it); false when it could not. */
function lowerNice(threadId: number, nice: number): boolean {
  try {
    setPriority(threadId, Math.max(nice, getPriority(threadId)))
    return true
  } catch {
    // Gone meanwhile, or a sandbox without setpriority: the thread keeps its priority.
    return false
  }
}

/**
 * Under Node only: the YAML worker runs under Bun and Deno too, and Deno
 * would ask for permission to run a program.
 */
const ON_NODE = !('bun' in process.versions) && !('deno' in process.versions)

/** Runs `chrt --idle` on one thread where `chrt` is installed; settles whether or not it could. */
async function idlePolicy(threadId: number): Promise<void> {
  const chrt = ON_NODE ? CHRT_PATHS.find((path) => existsSync(path)) : undefined
  if (chrt) await runQuietly(chrt, ['--idle', '--pid', '0', String(threadId)])
}

/** Runs a program; settles, never rejects, when it ends, fails or times out. */
async function runQuietly(program: string, args: readonly string[]): Promise<void> {
  // Loaded when first needed, after listening: child_process (and the cluster plumbing it loads) is no part of a start.
  const { execFile } = await import('node:child_process')
  return new Promise((resolve) => {
    try {
      execFile(program, args, { timeout: CHRT_TIMEOUT_MS }, () => resolve())
    } catch {
      resolve()
    }
  })
}

/**
 * The calling thread at nice 19, then under SCHED_IDLE where `chrt` can set
 * it: for the YAML worker, which starts after the daemon lowered the others
 * (the promise settles once `chrt` has run; it never rejects). Failures
 * leave the thread as it was: this is scheduling, not a setting a user
 * relies on.
 */
export async function lowerThisThread(): Promise<void> {
  const self = linuxThreadId()
  if (self !== undefined && lowerNice(self, YAML_WORKER_NICE)) await idlePolicy(self)
}

/**
 * Every thread of this process but the calling one at nice 10; called from
 * the serving thread once it serves, when the pools have started. Threads
 * made later take the priority of the thread that made them (the YAML
 * worker lowers itself).
 */
export function lowerBackgroundThreads(): void {
  const self = linuxThreadId()
  if (self === undefined) return
  let threads: string[]
  try {
    threads = readdirSync('/proc/self/task')
  } catch {
    return
  }
  for (const id of threads.map(Number)) if (id !== self) lowerNice(id, HELPER_NICE)
}
