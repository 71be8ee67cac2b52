/**
 * A strict reader of pprof's `profile.proto` (field numbers from
 * github.com/google/pprof proto/profile.proto), for tests that fetch
 * `/debug/pprof/*`: it ungzips the answer, decodes every field the encoder
 * may write, and throws where pprof would refuse the profile (a string,
 * function or location index that points nowhere, a sample whose values do
 * not match the sample types, a string table not starting with "").
 */
import { gunzipSync } from 'node:zlib'
import { Reader } from '../../core/encoding/protobuf/wire.js'

export interface DecodedFrame {
  functionName: string
  fileName: string
  line: number
}

export interface DecodedProfile {
  sampleTypes: { type: string; unit: string }[]
  samples: { stack: DecodedFrame[]; values: number[] }[]
  periodType: { type: string; unit: string }
  period: number
  timeNanos: number
  durationNanos: number
  comments: string[]
  defaultSampleType: string
  strings: string[]
}

const VARINT = 0
const LEN = 2

/** Each field of a message as its number and either a number or the bytes. */
function fields(bytes: Uint8Array): [number, number | Uint8Array][] {
  const r = new Reader(bytes)
  const out: [number, number | Uint8Array][] = []
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (wire === VARINT) out.push([field, r.int64()])
    else if (wire === LEN) out.push([field, r.bytes()])
    else throw new Error(`field ${field}: wire type ${wire} is not in profile.proto`)
  }
  return out
}

function packed(value: number | Uint8Array): number[] {
  if (typeof value === 'number') return [value]
  const r = new Reader(value)
  const out: number[] = []
  while (!r.eof()) out.push(r.int64())
  return out
}

const num = (v: number | Uint8Array | undefined): number => (typeof v === 'number' ? v : v === undefined ? 0 : Number.NaN)

export function decodePprof(gzipped: Uint8Array): DecodedProfile {
  const body = new Uint8Array(gunzipSync(gzipped))
  const top = fields(body)
  const strings = top.filter(([f]) => f === 6).map(([, v]) => new TextDecoder('utf-8', { fatal: true }).decode(v as Uint8Array))
  if (strings[0] !== '') throw new Error('the string table does not start with ""')
  const str = (i: number): string => {
    const s = strings[i]
    if (s === undefined) throw new Error(`string index ${i} is past the table (${strings.length})`)
    return s
  }
  const valueType = (v: number | Uint8Array) => {
    const f = new Map(fields(v as Uint8Array))
    return { type: str(num(f.get(1))), unit: str(num(f.get(2))) }
  }
  const functions = new Map<number, { name: string; fileName: string }>()
  for (const [f, v] of top) {
    if (f !== 5) continue
    const fn = new Map(fields(v as Uint8Array))
    functions.set(num(fn.get(1)), { name: str(num(fn.get(2))), fileName: str(num(fn.get(4))) })
  }
  const locations = new Map<number, DecodedFrame[]>()
  for (const [f, v] of top) {
    if (f !== 4) continue
    const loc = fields(v as Uint8Array)
    const id = num(loc.find(([n]) => n === 1)?.[1])
    const lines = loc
      .filter(([n]) => n === 4)
      .map(([, l]) => {
        const line = new Map(fields(l as Uint8Array))
        const fn = functions.get(num(line.get(1)))
        if (!fn) throw new Error(`location ${id} names function ${num(line.get(1))}, which is not in the profile`)
        return { functionName: fn.name, fileName: fn.fileName, line: num(line.get(2)) }
      })
    if (id === 0) throw new Error('a location with id 0')
    locations.set(id, lines)
  }
  const sampleTypes = top.filter(([f]) => f === 1).map(([, v]) => valueType(v))
  const samples = top
    .filter(([f]) => f === 2)
    .map(([, v]) => {
      const sample = fields(v as Uint8Array)
      const ids = sample.filter(([n]) => n === 1).flatMap(([, x]) => packed(x))
      const values = sample.filter(([n]) => n === 2).flatMap(([, x]) => packed(x))
      if (values.length !== sampleTypes.length) throw new Error(`a sample has ${values.length} values for ${sampleTypes.length} sample types`)
      const stack = ids.flatMap((id) => {
        const frames = locations.get(id)
        if (!frames) throw new Error(`a sample names location ${id}, which is not in the profile`)
        return frames
      })
      return { stack, values }
    })
  const one = (n: number) => top.find(([f]) => f === n)?.[1]
  const periodType = one(11)
  return {
    sampleTypes,
    samples,
    periodType: periodType ? valueType(periodType) : { type: '', unit: '' },
    period: num(one(12)),
    timeNanos: num(one(9)),
    durationNanos: num(one(10)),
    comments: top.filter(([f]) => f === 13).map(([, v]) => str(num(v))),
    defaultSampleType: str(num(one(14))),
    strings,
  }
}
