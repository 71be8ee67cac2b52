/**
 * V8's profilers behind core's Profiler port (`--profiling`,
 * `--debug-socket-path`), through the inspector protocol: the CPU profiler
 * for a CPU profile, and the sampling heap profiler, started with the
 * daemon, for heap profiles. Both give call frames and numbers; core writes
 * them in pprof's format. Nothing here reads the heap's contents (no heap
 * snapshot: it would hand out every key the process holds).
 *
 * Under Bun the inspector has the CPU profiler but no HeapProfiler domain:
 * the heap profiles answer 501 there. Deno has both.
 */
import type { Profiler } from '../../../core/ports.js'
import { cpuProfileFromV8, heapProfileFromV8, type V8CpuProfile, type V8SamplingHeapNode } from './v8-profiles.js'

/** One sample per 512 KiB allocated on average, as Go's runtime.MemProfileRate: cheap enough to leave on. */
export const HEAP_SAMPLING_INTERVAL_BYTES = 512 * 1024
/** 1 ms, V8's default; said explicitly, as the profile's period depends on it. */
const CPU_SAMPLING_INTERVAL_US = 1000

interface InspectorSession {
  connect(): void
  disconnect(): void
  post(method: string, params: object, callback: (err: Error | null, result?: unknown) => void): void
}

async function openSession(): Promise<{ post<T>(method: string, params?: object): Promise<T>; close(): void }> {
  const { Session } = (await import('node:inspector')) as unknown as { Session: new () => InspectorSession }
  const session = new Session()
  session.connect()
  return {
    post: <T>(method: string, params: object = {}) =>
      new Promise<T>((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T)))),
    close: () => session.disconnect(),
  }
}

/**
 * Whether a CPU profile is being taken in this process: Go's runtime allows
 * one at a time, and net/http/pprof refuses a second with its error.
 */
let cpuProfileRunning = false

/** Waits `ms`, or less when `stop` aborts first (the request that asked for the profile ended). */
function sleep(ms: number, stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (stop?.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      stop?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    stop?.addEventListener('abort', done, { once: true })
  })
}

/** The port, and `close` to stop the heap sampling at shutdown (a daemon run in-process leaves nothing running). */
export type NodeProfiler = Profiler & { close(): void }

/**
 * The profiler port; with `sampleHeap`, the sampling heap profiler starts
 * now and keeps running, so a heap profile shows what was allocated since
 * start-up and is still live (the watch caches, the stores). Loading the
 * inspector costs start-up about 13 ms of the thread; knowing at once
 * whether the runtime has a heap profiler keeps the routes' answer simple.
 */
export async function nodeProfiler(options: { sampleHeap: boolean }): Promise<NodeProfiler> {
  const profiler: NodeProfiler = {
    close: () => {},
    async cpuProfile(seconds, stop) {
      // Taken before the first await, so that of two requests at once exactly one profiles.
      if (cpuProfileRunning) throw new Error('cpu profiling already in use')
      cpuProfileRunning = true
      let session: Awaited<ReturnType<typeof openSession>> | undefined
      try {
        session = await openSession()
        await session.post('Profiler.enable')
        await session.post('Profiler.setSamplingInterval', { interval: CPU_SAMPLING_INTERVAL_US })
        const startedAt = Date.now()
        await session.post('Profiler.start')
        await sleep(seconds * 1000, stop)
        const { profile } = await session.post<{ profile: V8CpuProfile }>('Profiler.stop')
        return cpuProfileFromV8(profile, startedAt, CPU_SAMPLING_INTERVAL_US)
      } finally {
        session?.close()
        cpuProfileRunning = false
      }
    },
  }
  if (!options.sampleHeap) return { ...profiler, heapUnavailable: 'neither --profiling nor --debug-socket-path is set' }
  let session: Awaited<ReturnType<typeof openSession>> | undefined
  try {
    session = await openSession()
    await session.post('HeapProfiler.enable')
    await session.post('HeapProfiler.startSampling', { samplingInterval: HEAP_SAMPLING_INTERVAL_BYTES })
  } catch (err) {
    session?.close()
    return { ...profiler, heapUnavailable: `the runtime's inspector has no sampling heap profiler (${(err as Error).message})` }
  }
  const heap = session
  return {
    ...profiler,
    close: () => heap.close(),
    async heapProfile({ gc }) {
      if (gc) await heap.post('HeapProfiler.collectGarbage')
      const { profile } = await heap.post<{ profile: { head: V8SamplingHeapNode } }>('HeapProfiler.getSamplingProfile')
      return heapProfileFromV8(profile.head, Date.now(), HEAP_SAMPLING_INTERVAL_BYTES)
    },
  }
}
