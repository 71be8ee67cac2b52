/**
 * Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`), decoded
 * and encoded generically from the type table. kubectl's typed commands
 * (`create namespace|configmap|secret|serviceaccount`, `auth can-i`,
 * `auth whoami`) send only this encoding (kubectl-wire.md 1.4), so the server
 * must read it; encoding serves clients that accept nothing else.
 *
 * Envelope: "k8s\0" then runtime.Unknown {1: typeMeta {1: apiVersion, 2: kind},
 * 2: raw (the object's own message), 3: contentEncoding, 4: contentType}.
 */
import { isPlainObject } from '../resources/object.js'
import type { FieldDef, TypeDef, TypeRef, TypeTable } from '../resources/schema/index.js'
import { typeForKind, typeTable } from '../resources/schema/index.js'
import { badRequest, notAcceptable, StatusError } from './status-error.js'

export const PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00)

const VARINT = 0
const FIXED64 = 1
const LEN = 2
const FIXED32 = 5
const TWO_32 = 4294967296

const utf8 = new TextEncoder()
const utf8Strict = new TextDecoder('utf-8', { fatal: true })

/** A malformed body is the client's fault: always a 400, never a 500. */
class WireError extends Error {}

class Reader {
  pos = 0
  constructor(private readonly buf: Uint8Array) {}

  eof(): boolean {
    return this.pos >= this.buf.length
  }

  /** A varint as its low and high 32-bit halves. */
  varint64(): [number, number] {
    let lo = 0
    let hi = 0
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new WireError('truncated varint')
      const b = this.buf[this.pos++]!
      if (i < 4) lo |= (b & 0x7f) << (7 * i)
      else if (i === 4) {
        lo |= (b & 0x7f) << 28
        hi |= (b & 0x7f) >>> 4
      } else hi |= (b & 0x7f) << (7 * i - 32)
      if (b < 0x80) return [lo >>> 0, hi >>> 0]
    }
    throw new WireError('varint longer than 10 bytes')
  }

  /** Lengths and tags: must fit comfortably in a JS number. */
  uint(): number {
    const [lo, hi] = this.varint64()
    if (hi > 0x1fffff) throw new WireError('varint out of range')
    return hi * TWO_32 + lo
  }

  int64(): number {
    const [lo, hi] = this.varint64()
    if (hi & 0x80000000) return Number(BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)))
    return hi * TWO_32 + lo
  }

  int32(): number {
    return this.varint64()[0] | 0
  }

  bytes(): Uint8Array {
    const n = this.uint()
    if (n > this.buf.length - this.pos) throw new WireError(`length ${n} runs past the end of the message`)
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  string(): string {
    try {
      return utf8Strict.decode(this.bytes())
    } catch (err) {
      if (err instanceof WireError) throw err
      throw new WireError('string is not valid UTF-8')
    }
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) throw new WireError('truncated fixed64')
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true)
    this.pos += 8
    return v
  }

  tag(): [field: number, wire: number] {
    const t = this.uint()
    const field = Math.floor(t / 8)
    if (field === 0) throw new WireError('field number 0')
    return [field, t & 7]
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint64()
    else if (wire === LEN) this.bytes()
    else if (wire === FIXED64 || wire === FIXED32) {
      const n = wire === FIXED64 ? 8 : 4
      if (this.pos + n > this.buf.length) throw new WireError('truncated fixed-width field')
      this.pos += n
    } else throw new WireError(`unsupported wire type ${wire}`)
  }
}

class Writer {
  private buf = new Uint8Array(256)
  private len = 0

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n))
    next.set(this.buf.subarray(0, this.len))
    this.buf = next
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length)
    this.buf.set(bytes, this.len)
    this.len += bytes.length
  }

  /** Any integer; negatives take ten bytes (two's complement), as int32/int64 do on the wire. */
  varint(n: number): void {
    this.room(10)
    if (n < 0) {
      let u = BigInt.asUintN(64, BigInt(n))
      while (u >= 0x80n) {
        this.buf[this.len++] = Number(u & 0x7fn) | 0x80
        u >>= 7n
      }
      this.buf[this.len++] = Number(u)
      return
    }
    while (n >= 0x80) {
      this.buf[this.len++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.len++] = n
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }

  lenDelimited(field: number, bytes: Uint8Array): void {
    this.tag(field, LEN)
    this.varint(bytes.length)
    this.raw(bytes)
  }

  double(field: number, v: number): void {
    this.tag(field, FIXED64)
    this.room(8)
    new DataView(this.buf.buffer, this.len, 8).setFloat64(0, v, true)
    this.len += 8
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len)
  }
}

// ---- JSON forms of the special scalars ----

function toBase64(bytes: Uint8Array): string {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

function fromBase64(text: string, where: string): Uint8Array {
  let bin: string
  try {
    bin = atob(text)
  } catch {
    throw new Error(`${where}: not base64`)
  }
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

/** Time has second precision in JSON; MicroTime carries six fractional digits. */
function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const date = new Date(seconds * 1000)
  if (Number.isNaN(date.getTime())) throw new WireError(`timestamp ${seconds} out of range`)
  const base = date.toISOString().slice(0, 19)
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

function parseTime(text: string, where: string): [seconds: number, nanos: number] {
  const m = RFC3339.exec(text)
  if (!m) throw new Error(`${where}: not an RFC 3339 time: ${text}`)
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m
  let seconds = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) / 1000
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60)
  return [seconds, frac ? Number(frac.padEnd(9, '0')) : 0]
}

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3,
  'μs': 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
}

/** Go's time.ParseDuration: `1h30m`, `1.5s`, `-300ms`, `0`. */
export function parseGoDuration(text: string): number {
  const m = /^([+-]?)(.*)$/.exec(text)!
  const body = m[2]!
  if (body === '0') return 0
  const part = /(\d*(?:\.\d*)?)(ns|us|µs|μs|ms|s|m|h)/y
  let total = 0
  let pos = 0
  while (pos < body.length) {
    part.lastIndex = pos
    const p = part.exec(body)
    if (!p || p[1] === '' || p[1] === '.') throw new Error(`invalid duration ${JSON.stringify(text)}`)
    total += Number(p[1]) * DURATION_UNITS[p[2]!]!
    pos = part.lastIndex
  }
  if (body.length === 0) throw new Error(`invalid duration ${JSON.stringify(text)}`)
  total = Math.round(total)
  return m[1] === '-' ? -total : total
}

/** Go's time.Duration.String(): `1h0m0s`, `1m30.5s`, `300ms`, `0s`. */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  const u = Math.abs(ns)
  const frac = (v: number, digits: number): string => {
    const scale = 10 ** digits
    const whole = Math.floor(v / scale)
    const rest = String(v % scale)
      .padStart(digits, '0')
      .replace(/0+$/, '')
    return rest ? `${whole}.${rest}` : String(whole)
  }
  if (u < 1e3) return `${sign}${u}ns`
  if (u < 1e6) return `${sign}${frac(u, 3)}µs`
  if (u < 1e9) return `${sign}${frac(u, 6)}ms`
  const secs = Math.floor(u / 1e9)
  let out = `${frac((secs % 60) * 1e9 + (u % 1e9), 9)}s`
  const mins = Math.floor(secs / 60)
  if (mins > 0) {
    out = `${mins % 60}m${out}`
    const hours = Math.floor(mins / 60)
    if (hours > 0) out = `${hours}h${out}`
  }
  return sign + out
}

// ---- decoding ----

/**
 * Upstream's generated code writes every plain (non-pointer) field, so the
 * wire carries "" and 0 for fields the client never set. Go reads those as
 * unset, and so must we: a non-required string that is empty is dropped (Go's
 * omitempty), as are the integer meta fields below. Numbers and booleans are
 * otherwise kept, because a pointer field set to 0 or false (replicas,
 * automountServiceAccountToken) means something.
 */
const ZERO_MEANS_UNSET: Readonly<Record<string, readonly string[]>> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': ['generation'],
}

function dropUnsetZeros(obj: Record<string, unknown>, def: TypeDef): void {
  for (const f of def.fields) {
    if (obj[f.name] === '' && !f.required && 'scalar' in f.type && f.type.scalar === 'string') delete obj[f.name]
  }
  for (const name of ZERO_MEANS_UNSET[def.name] ?? []) if (obj[name] === 0) delete obj[name]
}

const byNumberCache = new WeakMap<TypeDef, Map<number, FieldDef>>()

function fieldsByNumber(def: TypeDef): Map<number, FieldDef> {
  let m = byNumberCache.get(def)
  if (!m) {
    m = new Map()
    for (const f of def.fields) if (f.proto !== undefined) m.set(f.proto, f)
    byNumberCache.set(def, m)
  }
  return m
}

function lookupType(name: string, types: TypeTable): TypeDef {
  const def = types[name]
  if (!def) throw new Error(`type ${name} is missing from the type table`)
  return def
}

function expectWire(wire: number, expected: number, where: string): void {
  if (wire !== expected) throw new WireError(`${where}: wire type ${wire}, expected ${expected}`)
}

function isPackable(t: TypeRef): boolean {
  return 'scalar' in t && ['boolean', 'int32', 'int64', 'double'].includes(t.scalar)
}

function decodeMessage(bytes: Uint8Array, def: TypeDef, types: TypeTable): Record<string, unknown> {
  const r = new Reader(bytes)
  const numbers = fieldsByNumber(def)
  const obj: Record<string, unknown> = {}
  while (!r.eof()) {
    const [num, wire] = r.tag()
    const field = numbers.get(num)
    if (!field) {
      r.skip(wire)
      continue
    }
    decodeField(obj, field, wire, r, `${def.name}.${field.name}`, types)
  }
  dropUnsetZeros(obj, def)
  return obj
}

function decodeField(
  obj: Record<string, unknown>,
  field: FieldDef,
  wire: number,
  r: Reader,
  where: string,
  types: TypeTable,
): void {
  const t = field.type
  if ('array' in t) {
    if (!Array.isArray(obj[field.name])) obj[field.name] = []
    const list = obj[field.name] as unknown[]
    if (wire === LEN && isPackable(t.array)) {
      // Packed repeated numbers: accepted although upstream's proto2 writers never pack.
      const packed = new Reader(r.bytes())
      const elementWire = 'scalar' in t.array && t.array.scalar === 'double' ? FIXED64 : VARINT
      while (!packed.eof()) list.push(decodeValue(t.array, elementWire, packed, where, types))
    } else {
      list.push(decodeValue(t.array, wire, r, where, types) ?? null)
    }
    return
  }
  if ('map' in t) {
    expectWire(wire, LEN, where)
    if (!isPlainObject(obj[field.name])) obj[field.name] = {}
    const map = obj[field.name] as Record<string, unknown>
    const entry = new Reader(r.bytes())
    let key = ''
    let value: unknown
    while (!entry.eof()) {
      const [n, w] = entry.tag()
      if (n === 1) {
        expectWire(w, LEN, `${where} key`)
        key = entry.string()
      } else if (n === 2) value = decodeValue(t.map, w, entry, `${where}[${key}]`, types)
      else entry.skip(w)
    }
    map[key] = value ?? zeroValue(t.map)
    return
  }
  const value = decodeValue(t, wire, r, where, types)
  if (value !== undefined) obj[field.name] = value
}

/** What an entry without a value means: the value type's zero. */
function zeroValue(t: TypeRef): unknown {
  if ('array' in t) return []
  if ('map' in t || 'ref' in t) return {}
  switch (t.scalar) {
    case 'string':
    case 'bytes':
      return ''
    case 'boolean':
      return false
    case 'quantity':
      return '0'
    case 'raw':
    case 'time':
    case 'microtime':
      return null
    case 'duration':
      return '0s'
    default:
      return 0
  }
}

/** One value; `undefined` for the null forms (a zero Time, an empty RawExtension). */
function decodeValue(t: TypeRef, wire: number, r: Reader, where: string, types: TypeTable): unknown {
  if ('ref' in t) {
    expectWire(wire, LEN, where)
    return decodeMessage(r.bytes(), lookupType(t.ref, types), types)
  }
  if ('array' in t) {
    // A list nested in a list or map travels in a wrapper message whose field 1 repeats (ExtraValue).
    expectWire(wire, LEN, where)
    const holder: Record<string, unknown> = {}
    const inner = new Reader(r.bytes())
    const items: FieldDef = { name: 'items', type: t, proto: 1 }
    while (!inner.eof()) {
      const [n, w] = inner.tag()
      if (n === 1) decodeField(holder, items, w, inner, where, types)
      else inner.skip(w)
    }
    return holder['items'] ?? []
  }
  if ('map' in t) throw new WireError(`${where}: maps nested in lists have no protobuf form`)
  switch (t.scalar) {
    case 'string':
      expectWire(wire, LEN, where)
      return r.string()
    case 'bytes':
      expectWire(wire, LEN, where)
      return toBase64(r.bytes())
    case 'boolean':
      expectWire(wire, VARINT, where)
      return r.uint() !== 0
    case 'int32':
      expectWire(wire, VARINT, where)
      return r.int32()
    case 'int64':
      expectWire(wire, VARINT, where)
      return r.int64()
    case 'double':
      expectWire(wire, FIXED64, where)
      return r.double()
    default:
      expectWire(wire, LEN, where)
      return decodeSpecial(t.scalar, new Reader(r.bytes()), where)
  }
}

function decodeSpecial(kind: string, r: Reader, where: string): unknown {
  const f: Record<number, unknown> = {}
  let raw: Uint8Array | undefined
  while (!r.eof()) {
    const [n, w] = r.tag()
    if (w === VARINT) f[n] = n === 2 && kind !== 'duration' ? r.int32() : r.int64()
    else if (w === LEN && kind === 'raw') raw = r.bytes()
    else if (w === LEN) f[n] = r.string()
    else r.skip(w)
  }
  switch (kind) {
    case 'time':
    case 'microtime': {
      const seconds = Number(f[1] ?? 0)
      const nanos = Number(f[2] ?? 0)
      // A zero Time is JSON null upstream; omitting the field says the same.
      if (seconds === 0 && nanos === 0) return undefined
      return formatTime(seconds, nanos, kind === 'microtime')
    }
    case 'quantity':
      return typeof f[1] === 'string' && f[1] !== '' ? f[1] : '0'
    case 'int-or-string':
      return f[1] === 1 ? (f[3] ?? '') : (f[2] ?? 0)
    case 'duration':
      return formatGoDuration(Number(f[1] ?? 0))
    case 'raw':
      return decodeRaw(raw, where)
    default:
      throw new WireError(`${where}: unsupported scalar ${kind}`)
  }
}

function decodeRaw(raw: Uint8Array | undefined, where: string): unknown {
  if (!raw || raw.length === 0) return undefined
  if (hasMagic(raw)) return decodeProtobuf(raw)
  try {
    return JSON.parse(utf8Strict.decode(raw))
  } catch {
    throw new WireError(`${where}: embedded object is neither JSON nor protobuf`)
  }
}

function hasMagic(body: Uint8Array): boolean {
  return body.length >= 4 && PROTOBUF_MAGIC.every((b, i) => body[i] === b)
}

function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
}

function hasProtobufForm(def: TypeDef): boolean {
  return def.fields.some((f) => f.proto !== undefined)
}

/**
 * The JSON form of a protobuf request body, with `apiVersion` and `kind` from
 * the envelope. Malformed bytes and kinds without a protobuf type are 400s.
 */
export function decodeProtobuf(body: Uint8Array): Record<string, unknown> {
  if (!hasMagic(body)) {
    throw badRequest('protobuf body does not start with the "k8s\\x00" prefix of application/vnd.kubernetes.protobuf')
  }
  try {
    const r = new Reader(body.subarray(4))
    let apiVersion = ''
    let kind = ''
    let raw: Uint8Array = new Uint8Array()
    let contentEncoding = ''
    while (!r.eof()) {
      const [n, w] = r.tag()
      if (n === 1) {
        expectWire(w, LEN, 'runtime.Unknown.typeMeta')
        const tm = new Reader(r.bytes())
        while (!tm.eof()) {
          const [tn, tw] = tm.tag()
          if (tn === 1 && tw === LEN) apiVersion = tm.string()
          else if (tn === 2 && tw === LEN) kind = tm.string()
          else tm.skip(tw)
        }
      } else if (n === 2) {
        expectWire(w, LEN, 'runtime.Unknown.raw')
        raw = r.bytes()
      } else if (n === 3) {
        expectWire(w, LEN, 'runtime.Unknown.contentEncoding')
        contentEncoding = r.string()
      } else r.skip(w)
    }
    if (contentEncoding) throw badRequest(`protobuf content encoding ${JSON.stringify(contentEncoding)} is not supported`)
    if (!kind || !apiVersion) throw badRequest('protobuf body is missing apiVersion or kind in its type metadata')
    const [group, version] = splitApiVersion(apiVersion)
    const def = typeForKind(group, version, kind)
    if (!def || !hasProtobufForm(def)) {
      throw badRequest(`no kind "${kind}" is registered for version "${apiVersion}" in the protobuf encoding`)
    }
    return { apiVersion, kind, ...decodeMessage(raw, def, typeTable) }
  } catch (err) {
    if (err instanceof StatusError) throw err
    const why = err instanceof Error ? err.message : String(err)
    throw badRequest(`unable to decode protobuf body: ${why}`)
  }
}

// ---- encoding ----

const sortedCache = new WeakMap<TypeDef, FieldDef[]>()

function fieldsInWireOrder(def: TypeDef): FieldDef[] {
  let list = sortedCache.get(def)
  if (!list) {
    list = def.fields.filter((f) => f.proto !== undefined).sort((a, b) => a.proto! - b.proto!)
    sortedCache.set(def, list)
  }
  return list
}

function encodeMessage(obj: unknown, def: TypeDef, where: string, types: TypeTable): Uint8Array {
  if (!isPlainObject(obj)) throw new Error(`${where}: expected an object`)
  const w = new Writer()
  // Proto2 as upstream writes it, except that only fields present in the JSON are written.
  for (const field of fieldsInWireOrder(def)) {
    const v = obj[field.name]
    if (v === undefined || v === null) continue
    encodeField(w, field.proto!, field.type, v, `${where}.${field.name}`, types)
  }
  return w.finish()
}

function encodeField(w: Writer, num: number, t: TypeRef, v: unknown, where: string, types: TypeTable): void {
  if ('array' in t) {
    if (!Array.isArray(v)) throw new Error(`${where}: expected a list`)
    for (const item of v) encodeValue(w, num, t.array, item, where, types)
    return
  }
  if ('map' in t) {
    if (!isPlainObject(v)) throw new Error(`${where}: expected a map`)
    // Keys sorted, as upstream's generated marshallers do, so output is deterministic.
    for (const key of Object.keys(v).sort()) {
      const entry = new Writer()
      entry.lenDelimited(1, utf8.encode(key))
      encodeValue(entry, 2, t.map, v[key] ?? zeroValue(t.map), `${where}[${key}]`, types)
      w.lenDelimited(num, entry.finish())
    }
    return
  }
  encodeValue(w, num, t, v, where, types)
}

function encodeValue(w: Writer, num: number, t: TypeRef, v: unknown, where: string, types: TypeTable): void {
  if ('ref' in t) {
    w.lenDelimited(num, encodeMessage(v, lookupType(t.ref, types), where, types))
    return
  }
  if ('array' in t) {
    const inner = new Writer()
    encodeField(inner, 1, t, v, where, types)
    w.lenDelimited(num, inner.finish())
    return
  }
  if ('map' in t) throw new Error(`${where}: maps nested in lists have no protobuf form`)
  const inner = new Writer()
  switch (t.scalar) {
    case 'string':
      w.lenDelimited(num, utf8.encode(asString(v, where)))
      return
    case 'bytes':
      w.lenDelimited(num, fromBase64(asString(v, where), where))
      return
    case 'boolean':
      if (typeof v !== 'boolean') throw new Error(`${where}: expected a boolean`)
      w.tag(num, VARINT)
      w.varint(v ? 1 : 0)
      return
    case 'int32':
    case 'int64':
      w.tag(num, VARINT)
      w.varint(asInteger(v, where))
      return
    case 'double':
      if (typeof v !== 'number') throw new Error(`${where}: expected a number`)
      w.double(num, v)
      return
    case 'time':
    case 'microtime': {
      const [seconds, nanos] = parseTime(asString(v, where), where)
      inner.tag(1, VARINT)
      inner.varint(seconds)
      inner.tag(2, VARINT)
      // MicroTime keeps microseconds only, as upstream's JSON form does.
      inner.varint(t.scalar === 'microtime' ? nanos - (nanos % 1000) : nanos)
      break
    }
    case 'quantity':
      inner.lenDelimited(1, utf8.encode(typeof v === 'number' ? String(v) : asString(v, where)))
      break
    case 'int-or-string':
      inner.tag(1, VARINT)
      inner.varint(typeof v === 'string' ? 1 : 0)
      inner.tag(2, VARINT)
      inner.varint(typeof v === 'string' ? 0 : asInteger(v, where))
      inner.lenDelimited(3, utf8.encode(typeof v === 'string' ? v : ''))
      break
    case 'duration':
      inner.tag(1, VARINT)
      inner.varint(parseGoDuration(asString(v, where)))
      break
    case 'raw':
      inner.lenDelimited(1, utf8.encode(JSON.stringify(v)))
      break
  }
  w.lenDelimited(num, inner.finish())
}

function asString(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new Error(`${where}: expected a string`)
  return v
}

function asInteger(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${where}: expected an integer`)
  return v
}

/**
 * The protobuf form of an object (a kind, a list, or a Status) for clients
 * that accept only protobuf. Kinds without a protobuf type (custom resources,
 * Table) are 406 Not Acceptable, as upstream answers.
 */
export function encodeProtobuf(obj: Record<string, unknown>): Uint8Array {
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : ''
  const kind = typeof obj['kind'] === 'string' ? obj['kind'] : ''
  const [group, version] = splitApiVersion(apiVersion)
  const def = typeForKind(group, version, kind)
  if (!def || !hasProtobufForm(def)) throw notAcceptable(['application/json', 'application/yaml'])
  const typeMeta = new Writer()
  typeMeta.lenDelimited(1, utf8.encode(apiVersion))
  typeMeta.lenDelimited(2, utf8.encode(kind))
  const unknown = new Writer()
  unknown.raw(PROTOBUF_MAGIC)
  unknown.lenDelimited(1, typeMeta.finish())
  unknown.lenDelimited(2, encodeMessage(obj, def, kind, typeTable))
  unknown.lenDelimited(3, new Uint8Array())
  unknown.lenDelimited(4, new Uint8Array())
  return unknown.finish()
}

/**
 * One message without the envelope, for a type from any table (custom types,
 * tests). Errors are 400s as for whole bodies.
 */
export function decodeMessageOf(bytes: Uint8Array, def: TypeDef, types: TypeTable = typeTable): Record<string, unknown> {
  try {
    return decodeMessage(bytes, def, types)
  } catch (err) {
    if (err instanceof StatusError) throw err
    throw badRequest(`unable to decode protobuf body: ${err instanceof Error ? err.message : String(err)}`)
  }
}

export function encodeMessageOf(obj: Record<string, unknown>, def: TypeDef, types: TypeTable = typeTable): Uint8Array {
  return encodeMessage(obj, def, def.name, types)
}
