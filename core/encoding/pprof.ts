/**
 * pprof's `profile.proto` (github.com/google/pprof, proto/profile.proto):
 * what `go tool pprof` and other pprof tooling read, and what Go's
 * net/http/pprof serves gzip-compressed. A profile here is stacks of
 * function names, file names and lines with numbers against them; nothing
 * in it is a value from memory, so it is safe to hand to whoever may profile.
 *
 * The runtime builds a SampledProfile from its own profiler's data; this
 * module interns strings, functions and locations and writes the message.
 */
import { LEN, Writer } from './protobuf/wire.js'

/** A sample type or the period's type, e.g. `cpu`/`nanoseconds`, `inuse_space`/`bytes`. */
export interface ValueType {
  type: string
  unit: string
}

/** One frame of a stack. Lines and columns count from 1; 0 when unknown. */
export interface StackFrame {
  functionName: string
  fileName: string
  /** The line the frame is at (pprof's Line.line). */
  line: number
  column: number
  /** The line the function starts at (pprof's Function.start_line). */
  startLine: number
}

export interface ProfileSample {
  /** Leaf first, as pprof orders a sample's locations. */
  stack: readonly StackFrame[]
  /** One value per sample type, in the same order. */
  values: readonly number[]
}

export interface SampledProfile {
  sampleTypes: readonly ValueType[]
  samples: readonly ProfileSample[]
  periodType: ValueType
  /** The sampling period, in the period type's unit. */
  period: number
  /** When the profile was taken (its start, for a profile over time), in nanoseconds since the epoch. */
  timeNanos: number
  durationNanos: number
  /** The sample type pprof shows first; it shows the last one when unset. */
  defaultSampleType?: string
  comments?: readonly string[]
}

// profile.proto's field numbers.
const PROFILE = { sampleType: 1, sample: 2, location: 4, function: 5, stringTable: 6, timeNanos: 9, durationNanos: 10, periodType: 11, period: 12, comment: 13, defaultSampleType: 14 }
const VALUE_TYPE = { type: 1, unit: 2 }
const SAMPLE = { locationId: 1, value: 2 }
const LOCATION = { id: 1, line: 4 }
const LINE = { functionId: 1, line: 2, column: 3 }
const FUNCTION = { id: 1, name: 2, systemName: 3, filename: 4, startLine: 5 }

/** Strings, functions and locations, each written once and referred to by index or id. */
class Tables {
  readonly strings: string[] = ['']
  private readonly stringIds = new Map<string, number>([['', 0]])
  readonly functions: Uint8Array[] = []
  private readonly functionIds = new Map<string, number>()
  readonly locations: Uint8Array[] = []
  private readonly locationIds = new Map<string, number>()

  string(s: string): number {
    let id = this.stringIds.get(s)
    if (id === undefined) {
      id = this.strings.length
      this.strings.push(s)
      this.stringIds.set(s, id)
    }
    return id
  }

  private functionId(frame: StackFrame): number {
    const key = `${frame.functionName}\0${frame.fileName}\0${frame.startLine}`
    let id = this.functionIds.get(key)
    if (id === undefined) {
      id = this.functions.length + 1
      const w = new Writer(32)
      varintField(w, FUNCTION.id, id)
      varintField(w, FUNCTION.name, this.string(frame.functionName))
      varintField(w, FUNCTION.systemName, this.string(frame.functionName))
      varintField(w, FUNCTION.filename, this.string(frame.fileName))
      varintField(w, FUNCTION.startLine, frame.startLine)
      this.functions.push(w.finish())
      this.functionIds.set(key, id)
    }
    return id
  }

  location(frame: StackFrame): number {
    const functionId = this.functionId(frame)
    const key = `${functionId}:${frame.line}:${frame.column}`
    let id = this.locationIds.get(key)
    if (id === undefined) {
      id = this.locations.length + 1
      const line = new Writer(16)
      varintField(line, LINE.functionId, functionId)
      varintField(line, LINE.line, frame.line)
      varintField(line, LINE.column, frame.column)
      const w = new Writer(32)
      varintField(w, LOCATION.id, id)
      w.lenDelimited(LOCATION.line, line.view())
      this.locations.push(w.finish())
      this.locationIds.set(key, id)
    }
    return id
  }
}

/** A varint field, left out when zero, as proto3 writes defaults. */
function varintField(w: Writer, field: number, n: number): void {
  if (n === 0) return
  w.tag(field, 0)
  w.varint(Math.round(n))
}

function packed(w: Writer, field: number, numbers: readonly number[]): void {
  if (numbers.length === 0) return
  const inner = new Writer(numbers.length * 2)
  for (const n of numbers) inner.varint(Math.round(n))
  w.lenDelimited(field, inner.view())
}

function valueType(tables: Tables, t: ValueType): Uint8Array {
  const w = new Writer(8)
  varintField(w, VALUE_TYPE.type, tables.string(t.type))
  varintField(w, VALUE_TYPE.unit, tables.string(t.unit))
  return w.finish()
}

/** The profile as an uncompressed `perftools.profiles.Profile` message. */
export function encodeProfile(profile: SampledProfile): Uint8Array {
  const tables = new Tables()
  const out = new Writer(64 * 1024)
  for (const t of profile.sampleTypes) out.lenDelimited(PROFILE.sampleType, valueType(tables, t))
  for (const sample of profile.samples) {
    if (sample.values.length !== profile.sampleTypes.length) throw new Error(`a sample has ${sample.values.length} values for ${profile.sampleTypes.length} sample types`)
    const w = new Writer(64)
    packed(
      w,
      SAMPLE.locationId,
      sample.stack.map((frame) => tables.location(frame)),
    )
    packed(w, SAMPLE.value, sample.values)
    out.lenDelimited(PROFILE.sample, w.view())
  }
  for (const location of tables.locations) out.lenDelimited(PROFILE.location, location)
  for (const fn of tables.functions) out.lenDelimited(PROFILE.function, fn)
  varintField(out, PROFILE.timeNanos, profile.timeNanos)
  varintField(out, PROFILE.durationNanos, profile.durationNanos)
  out.lenDelimited(PROFILE.periodType, valueType(tables, profile.periodType))
  varintField(out, PROFILE.period, profile.period)
  for (const comment of profile.comments ?? []) varintField(out, PROFILE.comment, tables.string(comment))
  if (profile.defaultSampleType) varintField(out, PROFILE.defaultSampleType, tables.string(profile.defaultSampleType))
  // The string table goes last: every other field has interned its strings by now.
  for (const s of tables.strings) {
    out.tag(PROFILE.stringTable, LEN)
    const bytes = new TextEncoder().encode(s)
    out.varint(bytes.length)
    out.raw(bytes)
  }
  return out.finish()
}

/** The profile as Go's net/http/pprof serves it: the message, gzip-compressed. */
export async function encodeProfileGzip(profile: SampledProfile): Promise<Uint8Array> {
  const gzipped = new Blob([encodeProfile(profile)]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(gzipped).arrayBuffer())
}
