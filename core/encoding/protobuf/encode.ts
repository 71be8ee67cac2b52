/**
 * The JSON form of an object to protobuf bytes, driven by the type table, for
 * clients that accept only protobuf.
 */
import { isPlainObject } from '../../machinery/object.js'
import type { FieldDef, Scalar, TypeDef, TypeRef, TypeTable } from '../../resources/schema/index.js'
import { typeForKind, typeTable } from '../../resources/schema/index.js'
import { notAcceptable } from '../../machinery/status-error.js'
import { bytesFromJson, isGoZeroTime, parseDurationNanos, parseTime } from './scalars.js'
import { formsWrapper, hasProtobufForm, lookupType, splitApiVersion, wrapForms, zeroValue } from './types.js'
import { PROTOBUF_MAGIC, utf8, VARINT, Writer } from './wire.js'

/** A field of the message, or an embedded Go struct travelling as one nested message. */
type WireSlot = { proto: number; field: FieldDef } | { proto: number; embedded: string }

const sortedCache = new WeakMap<TypeDef, WireSlot[]>()

function slotsInWireOrder(def: TypeDef): WireSlot[] {
  let list = sortedCache.get(def)
  if (!list) {
    const fields: WireSlot[] = def.fields.filter((f) => f.proto !== undefined).map((f) => ({ proto: f.proto!, field: f }))
    const embedded: WireSlot[] = (def.embedded ?? []).map((e) => ({ proto: e.proto, embedded: e.type }))
    list = [...fields, ...embedded].sort((a, b) => a.proto - b.proto)
    sortedCache.set(def, list)
  }
  return list
}

function encodeMessage(obj: unknown, def: TypeDef, where: string, types: TypeTable): Uint8Array {
  if (!isPlainObject(obj)) throw new Error(`${where}: expected an object`)
  const w = new Writer()
  // Proto2 as upstream writes it, except that only fields present in the JSON are written.
  for (const slot of slotsInWireOrder(def)) {
    if ('embedded' in slot) {
      const inner = lookupType(slot.embedded, types)
      if (inner.fields.some((f) => obj[f.name] !== undefined && obj[f.name] !== null))
        w.lenDelimited(slot.proto, encodeMessage(obj, inner, where, types))
      continue
    }
    const v = obj[slot.field.name]
    if (v === undefined || v === null) continue
    encodeField(w, slot.proto, slot.field.type, v, `${where}.${slot.field.name}`, types)
  }
  // A view of the writer's bytes: each caller copies them into the message around it at once.
  return w.view()
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
      const entry = new Writer(64)
      entry.lenDelimited(1, utf8.encode(key))
      encodeValue(entry, 2, t.map, v[key] ?? zeroValue(t.map), `${where}[${key}]`, types)
      w.lenDelimited(num, entry.view())
    }
    return
  }
  encodeValue(w, num, t, v, where, types)
}

function encodeValue(w: Writer, num: number, t: TypeRef, v: unknown, where: string, types: TypeTable): void {
  if ('ref' in t) {
    const def = lookupType(t.ref, types)
    if (def.jsonForms) {
      const wrapper = formsWrapper(def.name, def.jsonForms)
      w.lenDelimited(num, encodeMessage(wrapForms(def.jsonForms, v), wrapper, where, types))
    } else w.lenDelimited(num, encodeMessage(v, def, where, types))
    return
  }
  if ('array' in t) {
    const inner = new Writer()
    encodeField(inner, 1, t, v, where, types)
    w.lenDelimited(num, inner.view())
    return
  }
  if ('map' in t) throw new Error(`${where}: maps nested in lists have no protobuf form`)
  encodeScalar(w, num, t.scalar, v, where)
}

function encodeScalar(w: Writer, num: number, scalar: Scalar, v: unknown, where: string): void {
  switch (scalar) {
    case 'string':
      w.lenDelimited(num, utf8.encode(asString(v, where)))
      return
    case 'bytes':
      w.lenDelimited(num, bytesFromJson(asString(v, where), where))
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
    default:
      // The rest are small messages of their own (Time, Quantity, IntOrString, Duration, RawExtension).
      w.lenDelimited(num, wrappedScalar(scalar, v, where).view())
  }
}

function wrappedScalar(scalar: Scalar, v: unknown, where: string): Writer {
  const inner = new Writer(32)
  switch (scalar) {
    case 'time':
    case 'microtime': {
      const [seconds, nanos] = parseTime(asString(v, where), where)
      // MicroTime keeps microseconds only, as upstream's JSON form does; Time whole seconds.
      const kept = scalar === 'microtime' ? nanos - (nanos % 1000) : 0
      // Go's zero time goes as an empty message, as upstream's Time.Marshal writes it.
      if (isGoZeroTime(seconds, kept)) break
      inner.tag(1, VARINT)
      inner.varint(seconds)
      inner.tag(2, VARINT)
      inner.varint(kept)
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
      inner.varint(parseDurationNanos(asString(v, where)))
      break
    case 'raw':
      inner.lenDelimited(1, utf8.encode(JSON.stringify(v)))
      break
  }
  return inner
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
  unknown.lenDelimited(1, typeMeta.view())
  unknown.lenDelimited(2, encodeMessage(obj, def, kind, typeTable))
  unknown.lenDelimited(3, new Uint8Array())
  unknown.lenDelimited(4, new Uint8Array())
  return unknown.finish()
}

export function encodeMessageOf(obj: Record<string, unknown>, def: TypeDef, types: TypeTable = typeTable): Uint8Array {
  return encodeMessage(obj, def, def.name, types).slice()
}
