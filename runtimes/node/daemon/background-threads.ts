/**
 * The daemon's threads other than the serving one, at the lowest scheduling
 * priority (Linux, where a priority belongs to a thread). They are V8's
 * helpers (concurrent garbage collection, the optimizing compiler), libuv's
 * pool, the YAML worker and native libraries' threads: work that can wait.
 * A request is served only on the serving thread, so when every core is
 * busy, it should get one first.
 *
 * Two steps. At once, nice 19 (`os.setPriority` takes a thread id on
 * Linux). Then, where util-linux's `chrt` is installed (after a delay for
 * the daemon's own threads, see lowerBackgroundThreads), the SCHED_IDLE
 * policy: a nice value only weighs a thread's share, and the scheduler may
 * let a nice-19 thread finish its slice (up to milliseconds) before the
 * serving thread, woken by a request, gets the core; a SCHED_IDLE thread
 * gives the core up as soon as any other thread wants it. Node has no call
 * for a thread's policy, hence the program. Measured under the fuzz suite's
 * worst inputs with the daemon on one core, the serving thread otherwise
 * waited for the core behind V8's helpers (docs/benchmarks.md, "GET latency
 * under hostile input"): nice 19 halved those waits, SCHED_IDLE took most
 * of the rest.
 *
 * Elsewhere (macOS, Windows) a priority is the process's: nothing is changed.
 */
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/** The nice value background threads run at: the lowest priority a thread can lower itself to. */
export const BACKGROUND_NICE = 19

/** Where util-linux installs `chrt`; looked up by absolute path, never through PATH. */
const CHRT_PATHS = ['/usr/bin/chrt', '/bin/chrt']

/** The POSIX shell that runs the `chrt` of every thread. */
const SHELL = '/bin/sh'

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

/** Lowers one thread of this process to BACKGROUND_NICE (never raises it); false when it could not. */
function lowerNice(threadId: number): boolean {
  try {
    setPriority(threadId, Math.max(BACKGROUND_NICE, getPriority(threadId)))
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

/** Runs `chrt --idle` on one thread; settles whether or not it could. */
function idlePolicy(chrt: string, threadId: number): Promise<void> {
  return runQuietly(chrt, ['--idle', '--pid', '0', String(threadId)])
}

/** Runs a program; settles, never rejects, when it ends, fails or times out. */
function runQuietly(program: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    try {
      execFile(program, args, { timeout: CHRT_TIMEOUT_MS }, () => resolve())
    } catch {
      resolve()
    }
  })
}

/**
 * Every thread's `chrt` from one shell: a spawn stops this thread while the
 * process is copied (tens of milliseconds for the daemon on a busy machine),
 * and one spawn per thread, right after listening, held up the first
 * requests (a harness's readiness probes) by a few hundred milliseconds.
 */
const ONE_SHELL_LOOP = 'chrt="$1"; shift; for thread do "$chrt" --idle --pid 0 "$thread"; done'

/** Puts threads under SCHED_IDLE with `chrt`. */
async function idlePolicyFor(threadIds: readonly number[]): Promise<void> {
  const chrt = ON_NODE ? CHRT_PATHS.find((path) => existsSync(path)) : undefined
  if (!chrt || threadIds.length === 0) return
  if (existsSync(SHELL)) return runQuietly(SHELL, ['-c', ONE_SHELL_LOOP, 'sh', chrt, ...threadIds.map(String)])
  for (const id of threadIds) await idlePolicy(chrt, id)
}

/**
 * Lowers threads: nice 19 before it returns, then SCHED_IDLE where `chrt`
 * can set it, after `idleAfterMs` (the promise settles once it has run; it
 * never rejects). Failures leave a thread as it was: this is scheduling,
 * not a setting a user relies on.
 */
async function lowerThreads(threadIds: readonly number[], idleAfterMs = 0): Promise<void> {
  const lowered = threadIds.filter(lowerNice)
  if (idleAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, idleAfterMs).unref())
  return idlePolicyFor(lowered)
}

/** The calling thread lowered, for a thread that starts after the daemon lowered the others (the YAML worker). */
export function lowerThisThread(): Promise<void> {
  const self = linuxThreadId()
  return lowerThreads(self === undefined ? [] : [self])
}

/**
 * How long after the daemon listens its threads are put under SCHED_IDLE.
 * Running `chrt` means a spawn, which stops the serving thread while the
 * process is copied: on a busy machine over a hundred milliseconds, which
 * right after listening fell on a test harness's first readiness probes.
 * Nice 19 applies at once; SCHED_IDLE follows once the first requests
 * are answered.
 */
export const IDLE_POLICY_DELAY_MS = 2000

/**
 * Every thread of this process but the calling one, lowered; called from
 * the serving thread once it listens, when the pools have started. Threads
 * made later take the policy of the thread that made them (a worker lowers
 * itself).
 */
export function lowerBackgroundThreads(idleAfterMs = IDLE_POLICY_DELAY_MS): Promise<void> {
  const self = linuxThreadId()
  if (self === undefined) return Promise.resolve()
  let threads: string[]
  try {
    threads = readdirSync('/proc/self/task')
  } catch {
    return Promise.resolve()
  }
  return lowerThreads(
    threads.map(Number).filter((id) => id !== self),
    idleAfterMs,
  )
}
