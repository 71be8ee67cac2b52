/**
 * V8's profiles as the inspector protocol hands them over (a `.cpuprofile`
 * from Profiler.stop, a SamplingHeapProfile from
 * HeapProfiler.getSamplingProfile), turned into core's SampledProfile for
 * pprof. Both carry call frames and numbers only. Bun's inspector answers
 * Profiler.stop in the same shape.
 */
import type { SampledProfile, StackFrame } from '../../../core/encoding/pprof.js'

export interface V8CallFrame {
  functionName: string
  url: string
  /** 0-based; -1 when unknown. */
  lineNumber: number
  columnNumber: number
}

export interface V8CpuProfile {
  nodes: { id: number; callFrame: V8CallFrame; children?: number[] }[]
  /** Microseconds, on the profiler's own clock. */
  startTime: number
  endTime: number
  samples?: number[]
  /** Microseconds since the sample before (the first: since startTime). */
  timeDeltas?: number[]
}

export interface V8SamplingHeapNode {
  callFrame: V8CallFrame
  /** The bytes V8 estimates its sampled allocations at this frame stand for. */
  selfSize: number
  children: V8SamplingHeapNode[]
}

/** V8's pseudo-frames: the tree's root is no frame; `(idle)` is time the thread waited, not CPU. */
const ROOT = '(root)'
const IDLE = '(idle)'

function frameOf(callFrame: V8CallFrame): StackFrame {
  const line = callFrame.lineNumber >= 0 ? callFrame.lineNumber + 1 : 0
  return {
    functionName: callFrame.functionName || '(anonymous)',
    fileName: callFrame.url.startsWith('file://') ? decodeURIComponent(callFrame.url.slice('file://'.length)) : callFrame.url,
    line,
    column: callFrame.columnNumber >= 0 ? callFrame.columnNumber + 1 : 0,
    startLine: line,
  }
}

/**
 * A CPU profile as Go's: `samples`/`count` and `cpu`/`nanoseconds` per
 * stack, the nanoseconds being the time since the sample before.
 */
export function cpuProfileFromV8(profile: V8CpuProfile, startedAtMs: number, samplingIntervalUs: number): SampledProfile {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const totals = new Map<number, { count: number; nanos: number }>()
  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  samples.forEach((id, i) => {
    if (byId.get(id)?.callFrame.functionName === IDLE) return
    const total = totals.get(id) ?? { count: 0, nanos: 0 }
    total.count++
    total.nanos += Math.max(0, deltas[i] ?? 0) * 1000
    totals.set(id, total)
  })
  const stack = (id: number): StackFrame[] => {
    const frames: StackFrame[] = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)
      if (node && node.callFrame.functionName !== ROOT) frames.push(frameOf(node.callFrame))
    }
    return frames
  }
  return {
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    samples: [...totals].map(([id, total]) => ({ stack: stack(id), values: [total.count, total.nanos] })),
    periodType: { type: 'cpu', unit: 'nanoseconds' },
    period: samplingIntervalUs * 1000,
    timeNanos: startedAtMs * 1e6,
    durationNanos: Math.max(0, profile.endTime - profile.startTime) * 1000,
  }
}

/**
 * The live objects V8's sampling heap profiler holds samples of, as
 * `inuse_space`/`bytes` per stack. V8 hands over each sample's size already
 * scaled to the allocations it stands for, but not the object's own size,
 * so no count of objects can be derived: the profile has no
 * `inuse_objects`.
 */
export function heapProfileFromV8(head: V8SamplingHeapNode, takenAtMs: number, samplingIntervalBytes: number): SampledProfile {
  const samples: SampledProfile['samples'][number][] = []
  const walk = (node: V8SamplingHeapNode, above: readonly StackFrame[]): void => {
    const stack = node.callFrame.functionName === ROOT && above.length === 0 ? above : [frameOf(node.callFrame), ...above]
    if (node.selfSize > 0 && stack.length > 0) samples.push({ stack, values: [node.selfSize] })
    for (const child of node.children) walk(child, stack)
  }
  walk(head, [])
  return {
    sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }],
    samples,
    periodType: { type: 'space', unit: 'bytes' },
    period: samplingIntervalBytes,
    timeNanos: takenAtMs * 1e6,
    durationNanos: 0,
    comments: ['V8 sampling heap profiler: sampled allocations of objects still live; freed ones are not kept'],
  }
}
