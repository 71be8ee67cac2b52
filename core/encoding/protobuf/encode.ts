/**
 * The JSON form of an object to protobuf bytes, driven by the type table, for
 * clients that accept only protobuf.
 */
import { isPlainObject } from '../../machinery/object.js'
import { isDeepFrozen } from '../immutable.js'
import type { FieldDef, Scalar, TypeDef, TypeRef, TypeTable } from '../../resources/schema/index.js'
import { typeForKind, typeTable } from '../../resources/schema/index.js'
import { notAcceptable } from '../../machinery/status-error.js'
import { bytesFromJson, isGoZeroTime, parseDurationNanos, parseTime } from './scalars.js'
import { fieldPlace, formsWrapper, hasProtobufForm, lookupType, splitApiVersion, wrapForms, zeroValue } from './types.js'
import { PROTOBUF_MAGIC, VARINT, Writer } from './wire.js'
import { jsonTextInSteps } from '../../machinery/json-text.js'
import { sortInSteps } from '../../machinery/sort-in-steps.js'
import { type Checkpointed, StepCounter, UNITS_PER_STEP } from '../../machinery/time-slice.js'

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

/**
 * Writes `obj`'s fields as `def`'s message into `w`. Every nested message,
 * map entry and string is written in place (Writer.begin/end), one buffer
 * for the whole object. A value's place for error messages is its type's
 * and field's names, joined only when an error is thrown.
 */
function writeMessage(w: Writer, obj: unknown, def: TypeDef, types: TypeTable): void {
  if (!isPlainObject(obj)) throw new Error(`${def.name}: expected an object`)
  // Proto2 as upstream writes it, except that only fields present in the JSON are written.
  for (const slot of slotsInWireOrder(def)) {
    if ('embedded' in slot) {
      const inner = lookupType(slot.embedded, types)
      if (inner.fields.some((f) => obj[f.name] !== undefined && obj[f.name] !== null)) {
        const mark = w.begin(slot.proto)
        writeMessage(w, obj, inner, types)
        w.end(mark)
      }
      continue
    }
    const v = obj[slot.field.name]
    if (v === undefined || v === null) continue
    encodeField(w, slot.proto, slot.field.type, v, def.name, slot.field.name, types)
  }
}

function encodeField(w: Writer, num: number, t: TypeRef, v: unknown, owner: string, field: string, types: TypeTable): void {
  if ('array' in t) {
    if (!Array.isArray(v)) throw new Error(`${fieldPlace(owner, field)}: expected a list`)
    for (const item of v) encodeValue(w, num, t.array, item, owner, field, types)
    return
  }
  if ('map' in t) {
    if (!isPlainObject(v)) throw new Error(`${fieldPlace(owner, field)}: expected a map`)
    // Keys sorted, as upstream's generated marshallers do, so output is deterministic.
    for (const key of Object.keys(v).sort()) {
      const mark = w.begin(num)
      w.string(1, key)
      encodeValue(w, 2, t.map, v[key] ?? zeroValue(t.map), owner, field, types)
      w.end(mark)
    }
    return
  }
  encodeValue(w, num, t, v, owner, field, types)
}

/**
 * The message of each immutable object encoded as a nested message: a list's
 * items are the watch cache's frozen versions, handed out again with every
 * LIST, so each one's message is written once (as each one's JSON is kept).
 */
const keptMessages = new WeakMap<object, { def: TypeDef; bytes: Uint8Array }>()

function encodeValue(w: Writer, num: number, t: TypeRef, v: unknown, owner: string, field: string, types: TypeTable): void {
  if ('ref' in t) {
    const def = lookupType(t.ref, types)
    if (!def.jsonForms && isDeepFrozen(v)) {
      const kept = keptMessages.get(v)
      if (kept?.def === def) return w.lenDelimited(num, kept.bytes)
      const mark = w.begin(num)
      writeMessage(w, v, def, types)
      keptMessages.set(v, { def, bytes: w.endKeeping(mark) })
      return
    }
    const mark = w.begin(num)
    if (def.jsonForms) writeMessage(w, wrapForms(def.jsonForms, v), formsWrapper(def.name, def.jsonForms), types)
    else writeMessage(w, v, def, types)
    w.end(mark)
    return
  }
  if ('array' in t) {
    const mark = w.begin(num)
    encodeField(w, 1, t, v, owner, field, types)
    w.end(mark)
    return
  }
  if ('map' in t) throw new Error(`${fieldPlace(owner, field)}: maps nested in lists have no protobuf form`)
  encodeScalar(w, num, t.scalar, v, owner, field)
}

function encodeScalar(w: Writer, num: number, scalar: Scalar, v: unknown, owner: string, field: string): void {
  switch (scalar) {
    case 'string':
      w.string(num, asString(v, owner, field))
      return
    case 'bytes':
      w.lenDelimited(num, bytesFromJson(asString(v, owner, field), fieldPlace(owner, field)))
      return
    case 'boolean':
      if (typeof v !== 'boolean') throw new Error(`${fieldPlace(owner, field)}: expected a boolean`)
      w.tag(num, VARINT)
      w.varint(v ? 1 : 0)
      return
    case 'int32':
    case 'int64':
      w.tag(num, VARINT)
      w.varint(asInteger(v, owner, field))
      return
    case 'double':
      if (typeof v !== 'number') throw new Error(`${fieldPlace(owner, field)}: expected a number`)
      w.double(num, v)
      return
    default: {
      // The rest are small messages of their own (Time, Quantity, IntOrString, Duration, RawExtension).
      const mark = w.begin(num)
      writeWrappedScalar(w, scalar, v, owner, field)
      w.end(mark)
    }
  }
}

function writeWrappedScalar(w: Writer, scalar: Scalar, v: unknown, owner: string, field: string): void {
  switch (scalar) {
    case 'time':
    case 'microtime': {
      const [seconds, nanos] = parseTime(asString(v, owner, field), fieldPlace(owner, field))
      // MicroTime keeps microseconds only, as upstream's JSON form does; Time whole seconds.
      const kept = scalar === 'microtime' ? nanos - (nanos % 1000) : 0
      // Go's zero time goes as an empty message, as upstream's Time.Marshal writes it.
      if (isGoZeroTime(seconds, kept)) break
      w.tag(1, VARINT)
      w.varint(seconds)
      w.tag(2, VARINT)
      w.varint(kept)
      break
    }
    case 'quantity':
      w.string(1, typeof v === 'number' ? String(v) : asString(v, owner, field))
      break
    case 'int-or-string':
      w.tag(1, VARINT)
      w.varint(typeof v === 'string' ? 1 : 0)
      w.tag(2, VARINT)
      w.varint(typeof v === 'string' ? 0 : asInteger(v, owner, field))
      w.string(3, typeof v === 'string' ? v : '')
      break
    case 'duration':
      w.tag(1, VARINT)
      w.varint(parseDurationNanos(asString(v, owner, field)))
      break
    case 'raw':
      w.string(1, JSON.stringify(v))
      break
  }
}

function asString(v: unknown, owner: string, field: string): string {
  if (typeof v !== 'string') throw new Error(`${fieldPlace(owner, field)}: expected a string`)
  return v
}

function asInteger(v: unknown, owner: string, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${fieldPlace(owner, field)}: expected an integer`)
  return v
}

/**
 * The protobuf form of an object (a kind, a list, or a Status) for clients
 * that accept only protobuf. Kinds without a protobuf type (custom resources,
 * Table) are 406 Not Acceptable, as upstream answers.
 */
export function encodeProtobuf(obj: Record<string, unknown>): Uint8Array {
  const type = protobufTypeOf(obj)
  const w = objectWriter
  w.reset(KEPT_WRITER_BYTES)
  const raw = openEnvelope(w, type)
  writeMessage(w, obj, type.def, typeTable)
  return closeEnvelope(w, raw)
}

/** The object's type meta and message type; a kind without a protobuf form is 406, as upstream answers. */
function protobufTypeOf(obj: Record<string, unknown>): { apiVersion: string; kind: string; def: TypeDef } {
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : ''
  const kind = typeof obj['kind'] === 'string' ? obj['kind'] : ''
  const [group, version] = splitApiVersion(apiVersion)
  const def = typeForKind(group, version, kind)
  if (!def || !hasProtobufForm(def)) throw notAcceptable(['application/json', 'application/yaml'])
  return { apiVersion, kind, def }
}

/** The envelope (runtime.Unknown) up to its raw message, which is opened: its mark. */
function openEnvelope(w: Writer, type: { apiVersion: string; kind: string }): number {
  w.raw(PROTOBUF_MAGIC)
  const typeMeta = w.begin(1)
  w.string(1, type.apiVersion)
  w.string(2, type.kind)
  w.end(typeMeta)
  return w.begin(2)
}

/** The raw message closed, the envelope's empty encoding fields written: the bytes. */
function closeEnvelope(w: Writer, raw: number): Uint8Array {
  w.end(raw)
  w.lenDelimited(3, NO_BYTES)
  w.lenDelimited(4, NO_BYTES)
  return w.finish()
}

const NO_BYTES = new Uint8Array()

/**
 * encodeProtobuf as checkpointed work, for an object of megabytes, whose
 * encoding in one piece held the thread for hundreds of milliseconds (a map
 * of 250,000 keys: sorting them, writing each entry). The bytes are the
 * same; the walk yields every few thousand map entries or list items, into
 * a writer of its own (the shared one serves encodings that run at once).
 */
export function* encodeProtobufInSteps(obj: Record<string, unknown>): Checkpointed<Uint8Array> {
  const type = protobufTypeOf(obj)
  const w = new Writer(KEPT_WRITER_BYTES)
  const raw = openEnvelope(w, type)
  yield* writeMessageInSteps(w, obj, type.def, typeTable)
  return closeEnvelope(w, raw)
}

/** Map entries and list items written between two checkpoints. */
const entriesWritten = new StepCounter()

/** writeMessage in steps: each field holding a list, a map or a message written by the walks below. */
function* writeMessageInSteps(w: Writer, obj: unknown, def: TypeDef, types: TypeTable): Checkpointed<void> {
  if (!isPlainObject(obj)) throw new Error(`${def.name}: expected an object`)
  for (const slot of slotsInWireOrder(def)) {
    if ('embedded' in slot) {
      const inner = lookupType(slot.embedded, types)
      if (inner.fields.some((f) => obj[f.name] !== undefined && obj[f.name] !== null)) {
        const mark = w.begin(slot.proto)
        yield* writeMessageInSteps(w, obj, inner, types)
        w.end(mark)
      }
      continue
    }
    const v = obj[slot.field.name]
    if (v === undefined || v === null) continue
    yield* encodeFieldInSteps(w, slot.proto, slot.field.type, v, def.name, slot.field.name, types)
  }
}

/** encodeField in steps: a map's keys sorted in runs, a checkpoint every few thousand entries. */
function* encodeFieldInSteps(w: Writer, num: number, t: TypeRef, v: unknown, owner: string, field: string, types: TypeTable): Checkpointed<void> {
  if ('array' in t) {
    if (!Array.isArray(v)) throw new Error(`${fieldPlace(owner, field)}: expected a list`)
    for (const item of v) {
      yield* encodeValueInSteps(w, num, t.array, item, owner, field, types)
      if (entriesWritten.add()) yield
    }
    return
  }
  if ('map' in t) {
    if (!isPlainObject(v)) throw new Error(`${fieldPlace(owner, field)}: expected a map`)
    const keys = Object.keys(v)
    if (keys.length > UNITS_PER_STEP) yield
    // The order of encodeField's sort(): UTF-16 code units.
    for (const key of yield* sortInSteps(keys, (a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const mark = w.begin(num)
      w.string(1, key)
      yield* encodeValueInSteps(w, 2, t.map, v[key] ?? zeroValue(t.map), owner, field, types)
      w.end(mark)
      if (entriesWritten.add()) yield
    }
    return
  }
  yield* encodeValueInSteps(w, num, t, v, owner, field, types)
}

/** encodeValue in steps; a message kept from an earlier encoding (a frozen list item) is copied as it was. */
function* encodeValueInSteps(w: Writer, num: number, t: TypeRef, v: unknown, owner: string, field: string, types: TypeTable): Checkpointed<void> {
  if ('ref' in t) {
    const def = lookupType(t.ref, types)
    const kept = !def.jsonForms && isDeepFrozen(v) ? keptMessages.get(v) : undefined
    if (kept?.def === def) return w.lenDelimited(num, kept.bytes)
    const mark = w.begin(num)
    if (def.jsonForms) yield* writeMessageInSteps(w, wrapForms(def.jsonForms, v), formsWrapper(def.name, def.jsonForms), types)
    else yield* writeMessageInSteps(w, v, def, types)
    w.end(mark)
    return
  }
  if ('array' in t) {
    const mark = w.begin(num)
    yield* encodeFieldInSteps(w, 1, t, v, owner, field, types)
    w.end(mark)
    return
  }
  if ('scalar' in t && t.scalar === 'raw') {
    // Raw JSON (managedFields' FieldsV1) as writeWrappedScalar writes it, its text written in steps.
    const text = (yield* jsonTextInSteps(v)) as string
    const mark = w.begin(num)
    w.string(1, text)
    w.end(mark)
    return
  }
  encodeValue(w, num, t, v, owner, field, types)
}

/**
 * One writer for every object encoded: an encode runs to its end without
 * giving the thread away and never starts another, and `finish` copies the
 * bytes out, so the buffer is reused instead of allocated (and grown) per object.
 */
const objectWriter = new Writer(16 * 1024)
const KEPT_WRITER_BYTES = 256 * 1024

export function encodeMessageOf(obj: Record<string, unknown>, def: TypeDef, types: TypeTable = typeTable): Uint8Array {
  const w = new Writer()
  writeMessage(w, obj, def, types)
  return w.finish()
}
