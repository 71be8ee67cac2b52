/**
 * The daemon's threads other than the serving one, at the lowest scheduling
 * priority (Linux, where a priority belongs to a thread). They are V8's
 * helpers (concurrent garbage collection, the optimizing compiler), libuv's
 * pool, the YAML worker and native libraries' threads: work that can wait.
 * A request is served only on the serving thread, so when every core is
 * busy, it should get one first. Measured under the fuzz suite's worst
 * inputs with the daemon on one core, the serving thread otherwise waited
 * milliseconds for the core behind the helpers collecting the YAML worker's
 * garbage (docs/benchmarks.md, "GET latency under hostile input").
 *
 * Elsewhere (macOS, Windows) a priority is the process's: nothing is changed.
 */
import { readdirSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/** The nice value background threads run at: the lowest priority a thread can lower itself to. */
export const BACKGROUND_NICE = 19

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
export function lowerThreadPriority(threadId: number): boolean {
  try {
    setPriority(threadId, Math.max(BACKGROUND_NICE, getPriority(threadId)))
    return true
  } catch {
    // Gone meanwhile, or a sandbox without setpriority: the thread keeps its priority.
    return false
  }
}

/**
 * Every thread of this process but the calling one, lowered; called from the
 * serving thread once it listens, when the pools have started. Threads made
 * later keep the priority of the thread that made them (a worker lowers
 * itself). Returns how many were lowered: 0 where threads have no priority
 * of their own.
 */
export function lowerBackgroundThreads(): number {
  const self = linuxThreadId()
  if (self === undefined) return 0
  let threads: string[]
  try {
    threads = readdirSync('/proc/self/task')
  } catch {
    return 0
  }
  let lowered = 0
  for (const entry of threads) {
    const id = Number(entry)
    if (id !== self && lowerThreadPriority(id)) lowered++
  }
  return lowered
}
