/**
 * V8's profilers behind core's Profiler port (`--profiling`): a CPU
 * profile through the inspector protocol (`.cpuprofile`, which Chrome
 * DevTools, VS Code and speedscope open) and a heap snapshot
 * (`.heapsnapshot`, for DevTools' Memory panel), streamed as V8 writes it.
 * The inspector module loads with the first CPU profile, not at every start.
 */
import { Readable } from 'node:stream'
import { getHeapSnapshot } from 'node:v8'
import type { Profiler } from '../../core/ports.js'

export function nodeProfiler(): Profiler {
  return {
    async cpuProfile(seconds) {
      const { Session } = await import('node:inspector/promises')
      const session = new Session()
      session.connect()
      try {
        await session.post('Profiler.enable')
        await session.post('Profiler.start')
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
        const { profile } = await session.post('Profiler.stop')
        return { body: JSON.stringify(profile), fileName: 'cpu.cpuprofile' }
      } finally {
        session.disconnect()
      }
    },
    async heapSnapshot() {
      return { body: Readable.toWeb(getHeapSnapshot()) as ReadableStream<Uint8Array>, fileName: 'heap.heapsnapshot' }
    },
  }
}
