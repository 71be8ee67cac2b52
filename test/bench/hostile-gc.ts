/**
 * What each of the fuzz suite's worst inputs costs the garbage collector,
 * sent alone in process a few times: the bytes it allocates (from the heap
 * sizes V8 reports before and after each collection) and the collections'
 * pauses. Figures only: nothing passes or fails.
 *
 * Run with `node --import tsx test/bench/hostile-gc.ts [repeats] [worker]`:
 * with `worker`, YAML is decoded in the Node runtime's worker thread (as the
 * daemon does), whose heap and collections are not the serving thread's,
 * and so not counted here.
 */
import { GCProfiler } from 'node:v8'
import { fuzzServer, send } from '../fuzz/fuzz-server.js'
import { worstInputs } from '../fuzz/worst-inputs.js'
import type { ServerPorts } from '../../core/index.js'
import { nodeYamlDecoder } from '../../runtimes/node/daemon/yaml-decoder.js'

interface GcEntry {
  cost: number
  gcType: string
  beforeGC: { heapStatistics: { usedHeapSize: number } }
  afterGC: { heapStatistics: { usedHeapSize: number } }
}

interface InputCost {
  name: string
  status: number
  allocatedMiB: number
  collections: number
  pausesOver5ms: number
  longestPauseMs: number
  totalPauseMs: number
}

/** Allocation between collections: what the heap grew by from one collection's end to the next one's start. */
function allocatedBetween(entries: GcEntry[], startUsed: number, endUsed: number): number {
  let used = startUsed
  let total = 0
  for (const e of entries) {
    total += Math.max(0, e.beforeGC.heapStatistics.usedHeapSize - used)
    used = e.afterGC.heapStatistics.usedHeapSize
  }
  return total + Math.max(0, endUsed - used)
}

export async function measureGcPerInput(repeats: number, ports: Partial<ServerPorts> = {}): Promise<InputCost[]> {
  const { getHeapStatistics } = await import('node:v8')
  const server = await fuzzServer(ports)
  const inputs = worstInputs()
  for (const { request } of inputs) await send(server, request)
  const costs: InputCost[] = []
  for (const { name, request } of inputs) {
    const profiler = new GCProfiler()
    const startUsed = getHeapStatistics().used_heap_size
    profiler.start()
    let status = 0
    for (let i = 0; i < repeats; i++) status = (await send(server, request)).status
    const endUsed = getHeapStatistics().used_heap_size
    const entries = (profiler.stop()?.statistics ?? []) as GcEntry[]
    const pauses = entries.map((e) => e.cost / 1000)
    costs.push({
      name,
      status,
      allocatedMiB: allocatedBetween(entries, startUsed, endUsed) / repeats / 2 ** 20,
      collections: entries.length / repeats,
      pausesOver5ms: pauses.filter((p) => p > 5).length / repeats,
      longestPauseMs: Math.max(0, ...pauses),
      totalPauseMs: pauses.reduce((a, b) => a + b, 0) / repeats,
    })
  }
  await server.shutdown()
  return costs
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const repeats = Number(process.argv[2] ?? 5)
  const yamlDecoder = process.argv[3] === 'worker' ? nodeYamlDecoder() : undefined
  const costs = await measureGcPerInput(repeats, yamlDecoder ? { yamlDecoder } : {})
  await yamlDecoder?.close()
  console.log('| worst input | answer | allocated per request | collections | over 5 ms | longest pause | pause per request |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const c of costs) {
    console.log(
      `| ${c.name} | ${c.status} | ${c.allocatedMiB.toFixed(1)} MiB | ${c.collections.toFixed(1)} | ${c.pausesOver5ms.toFixed(1)} | ${c.longestPauseMs.toFixed(1)} ms | ${c.totalPauseMs.toFixed(1)} ms |`,
    )
  }
  process.exit(0)
}
