/**
 * Protobuf bytes to the JSON form of an object, driven by the type table:
 * what kubectl's typed commands send (kubectl-wire.md 1.4).
 */
import { base64Encode } from '../../machinery/base64.js'
import { formatGoDuration } from '../../machinery/duration.js'
import { isPlainObject, setKey } from '../../machinery/object.js'
import type { FieldDef, TypeDef, TypeRef, TypeTable } from '../../resources/schema/index.js'
import { typeForKind, typeTable } from '../../resources/schema/index.js'
import { depthMessage, isStackOverflow, JsonDepthScanner } from '../../machinery/limits.js'
import { badRequest, StatusError } from '../../machinery/status-error.js'
import { PLAIN_OMITEMPTY_FIELDS } from './generated-omitempty.js'
import { formatTime, isGoZeroTime } from './scalars.js'
import { fieldPlace, formsWrapper, hasProtobufForm, lookupType, splitApiVersion, unwrapForms, zeroValue } from './types.js'
import { FIXED64, hasMagic, keyField, LEN, Reader, utf8Strict, VARINT, WireError } from './wire.js'
import { type Checkpointed, runAtOnce, StepCounter } from '../../machinery/time-slice.js'

/**
 * Upstream's generated code writes every plain (non-pointer) field, so the
 * wire carries "", 0 and false for fields the client never set; a pointer
 * field only when it is set. Go reads a plain field's zero as unset and
 * leaves it out of JSON where its tag says `omitempty` (hostNetwork, stdin,
 * hostPort), while a pointer set to 0, false or "" (replicas,
 * automountServiceAccountToken, storageClassName) means what it says. The
 * Go types tell the two apart (generated-omitempty.ts); for a message they
 * do not name, an empty string that is not required is dropped, and the
 * rest kept.
 */
function dropUnsetZeros(obj: Record<string, unknown>, def: TypeDef): void {
  const plain = PLAIN_OMITEMPTY_FIELDS[def.name]
  if (plain) {
    for (const name of plain) if (obj[name] === 0 || obj[name] === false || obj[name] === '') delete obj[name]
    return
  }
  for (const f of def.fields) {
    if (obj[f.name] === '' && !f.required && 'scalar' in f.type && f.type.scalar === 'string') delete obj[f.name]
  }
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

function expectWire(wire: number, expected: number, owner: string, field: string): void {
  if (wire !== expected) throw new WireError(`${fieldPlace(owner, field)}: wire type ${wire}, expected ${expected}`)
}

function isPackable(t: TypeRef): boolean {
  return 'scalar' in t && ['boolean', 'int32', 'int64', 'double'].includes(t.scalar)
}

/**
 * The message `r` is inside (to `r.end`) as `def`'s JSON form. Nested
 * messages are read in place (`Reader.enter`), and a field's place for
 * error messages is its type's and field's names, joined only on an error.
 */
function* decodeMessage(r: Reader, def: TypeDef, types: TypeTable): Checkpointed<Record<string, unknown>> {
  const numbers = fieldsByNumber(def)
  const obj: Record<string, unknown> = {}
  while (r.pos < r.end) {
    if (fieldsRead.add()) yield
    const key = r.key()
    const wire = key & 7
    const num = keyField(key)
    const field = numbers.get(num)
    if (!field) {
      const embedded = def.embedded?.find((e) => e.proto === num)
      if (!embedded) {
        r.skip(wire)
        continue
      }
      // An embedded Go struct: its fields belong at this level of the JSON form.
      expectWire(wire, LEN, def.name, `embedded ${embedded.type}`)
      const outer = r.enter()
      Object.assign(obj, yield* decodeMessage(r, lookupType(embedded.type, types), types))
      r.leave(outer)
      continue
    }
    yield* decodeField(obj, field, wire, r, def.name, types)
  }
  dropUnsetZeros(obj, def)
  return obj
}

function* decodeField(obj: Record<string, unknown>, field: FieldDef, wire: number, r: Reader, owner: string, types: TypeTable): Checkpointed<void> {
  const t = field.type
  if ('array' in t) {
    let list = obj[field.name] as unknown[] | undefined
    if (!Array.isArray(list)) obj[field.name] = list = []
    if (wire === LEN && isPackable(t.array)) {
      // Packed repeated numbers: accepted although upstream's proto2 writers never pack.
      const elementWire = 'scalar' in t.array && t.array.scalar === 'double' ? FIXED64 : VARINT
      const outer = r.enter()
      while (r.pos < r.end) {
        list.push(yield* decodeValue(t.array, elementWire, r, owner, field.name, types))
        if (fieldsRead.add()) yield
      }
      r.leave(outer)
    } else {
      list.push((yield* decodeValue(t.array, wire, r, owner, field.name, types)) ?? null)
    }
    return
  }
  if ('map' in t) {
    expectWire(wire, LEN, owner, field.name)
    let map = obj[field.name] as Record<string, unknown> | undefined
    if (!isPlainObject(map)) obj[field.name] = map = {}
    let key = ''
    let value: unknown
    const outer = r.enter()
    while (r.pos < r.end) {
      const entryKey = r.key()
      const n = keyField(entryKey)
      const w = entryKey & 7
      if (n === 1) {
        if (w !== LEN) throw new WireError(`${fieldPlace(owner, field.name)} key: wire type ${w}, expected ${LEN}`)
        key = r.string()
      } else if (n === 2) value = yield* decodeValue(t.map, w, r, owner, field.name, types)
      else r.skip(w)
      if (fieldsRead.add()) yield
    }
    r.leave(outer)
    setKey(map, key, value ?? zeroValue(t.map))
    return
  }
  const value = yield* decodeValue(t, wire, r, owner, field.name, types)
  if (value !== undefined) obj[field.name] = value
}

/** One value; `undefined` for the null forms (a zero Time, an empty RawExtension). */
function* decodeValue(t: TypeRef, wire: number, r: Reader, owner: string, field: string, types: TypeTable): Checkpointed<unknown> {
  if ('ref' in t) {
    expectWire(wire, LEN, owner, field)
    const def = lookupType(t.ref, types)
    const outer = r.enter()
    const value = def.jsonForms ? unwrapForms(def.jsonForms, yield* decodeMessage(r, formsWrapper(def.name, def.jsonForms), types)) : yield* decodeMessage(r, def, types)
    r.leave(outer)
    return value
  }
  if ('array' in t) {
    // A list nested in a list or map travels in a wrapper message whose field 1 repeats (ExtraValue).
    expectWire(wire, LEN, owner, field)
    const holder: Record<string, unknown> = {}
    const items: FieldDef = { name: 'items', type: t, proto: 1 }
    const outer = r.enter()
    while (r.pos < r.end) {
      const key = r.key()
      if (keyField(key) === 1) yield* decodeField(holder, items, key & 7, r, fieldPlace(owner, field), types)
      else r.skip(key & 7)
      if (fieldsRead.add()) yield
    }
    r.leave(outer)
    return holder['items'] ?? []
  }
  if ('map' in t) throw new WireError(`${fieldPlace(owner, field)}: maps nested in lists have no protobuf form`)
  switch (t.scalar) {
    case 'string':
      expectWire(wire, LEN, owner, field)
      return r.string()
    case 'bytes':
      expectWire(wire, LEN, owner, field)
      return base64Encode(r.bytes())
    case 'boolean':
      expectWire(wire, VARINT, owner, field)
      return r.uint() !== 0
    case 'int32':
      expectWire(wire, VARINT, owner, field)
      return r.int32()
    case 'int64':
      expectWire(wire, VARINT, owner, field)
      return r.int64()
    case 'double':
      expectWire(wire, FIXED64, owner, field)
      return r.double()
    default: {
      expectWire(wire, LEN, owner, field)
      const outer = r.enter()
      const value = yield* decodeSpecial(t.scalar, r, owner, field)
      r.leave(outer)
      return value
    }
  }
}

function* decodeSpecial(kind: string, r: Reader, owner: string, field: string): Checkpointed<unknown> {
  const f: Record<number, unknown> = {}
  let raw: Uint8Array | undefined
  while (r.pos < r.end) {
    const key = r.key()
    const n = keyField(key)
    const w = key & 7
    if (w === VARINT) f[n] = n === 2 && kind !== 'duration' ? r.int32() : r.int64()
    else if (w === LEN && kind === 'raw') raw = r.bytes()
    else if (w === LEN) f[n] = r.string()
    else r.skip(w)
    // A Time of two fields may be sent with a million unknown ones: each is counted as any other field.
    if (fieldsRead.add()) yield
  }
  switch (kind) {
    case 'time':
    case 'microtime': {
      const seconds = Number(f[1] ?? 0)
      const nanos = Number(f[2] ?? 0)
      // Go's zero time (an empty message, or its seconds) is JSON null upstream; omitting the field says the same.
      if ((f[1] === undefined && f[2] === undefined) || isGoZeroTime(seconds, nanos)) return undefined
      return formatTime(seconds, nanos, kind === 'microtime')
    }
    case 'quantity':
      return typeof f[1] === 'string' && f[1] !== '' ? f[1] : '0'
    case 'int-or-string':
      return f[1] === 1 ? (f[3] ?? '') : (f[2] ?? 0)
    case 'duration':
      return formatGoDuration(Number(f[1] ?? 0))
    case 'raw':
      return yield* decodeRaw(raw, fieldPlace(owner, field))
    default:
      throw new WireError(`${fieldPlace(owner, field)}: unsupported scalar ${kind}`)
  }
}

function* decodeRaw(raw: Uint8Array | undefined, where: string): Checkpointed<unknown> {
  if (!raw || raw.length === 0) return undefined
  if (hasMagic(raw)) return yield* decodeEnvelope(raw)
  // Refused before parsing, as a JSON body nested this deeply is: V8's parser takes a quarter of a second over a million levels.
  if (new JsonDepthScanner().feed(raw) !== undefined) throw new WireError(depthMessage())
  try {
    return JSON.parse(utf8Strict.decode(raw))
  } catch (err) {
    if (isStackOverflow(err)) throw err
    throw new WireError(`${where}: embedded object is neither JSON nor protobuf`)
  }
}

/**
 * The JSON form of a protobuf request body, with `apiVersion` and `kind` from
 * the envelope. Malformed bytes and kinds without a protobuf type are 400s.
 */
export function decodeProtobuf(body: Uint8Array): Record<string, unknown> {
  return runAtOnce(decodeProtobufInSteps(body))
}

/**
 * decodeProtobuf with a checkpoint every few thousand fields: a body of
 * megabytes (a Pod of a million empty containers, a ConfigMap of 200,000
 * keys) took a third of a second to a second to decode in one piece.
 */
export function* decodeProtobufInSteps(body: Uint8Array): Checkpointed<Record<string, unknown>> {
  try {
    return yield* decodeEnvelope(body)
  } catch (err) {
    throw decodeFailure(err)
  }
}

/** The envelope and the object inside it; errors as they are raised, for the caller to word. */
function* decodeEnvelope(body: Uint8Array): Checkpointed<Record<string, unknown>> {
  if (!hasMagic(body)) {
    throw badRequest('protobuf body does not start with the "k8s\\x00" prefix of application/vnd.kubernetes.protobuf')
  }
  const r = new Reader(body.subarray(4))
  let apiVersion = ''
  let kind = ''
  let raw: Uint8Array = new Uint8Array()
  let contentEncoding = ''
  while (!r.eof()) {
    const [n, w] = r.tag()
    if (n === 1) {
      expectWire(w, LEN, 'runtime.Unknown', 'typeMeta')
      const tm = new Reader(r.bytes())
      while (!tm.eof()) {
        const [tn, tw] = tm.tag()
        if (tn === 1 && tw === LEN) apiVersion = tm.string()
        else if (tn === 2 && tw === LEN) kind = tm.string()
        else tm.skip(tw)
        if (fieldsRead.add()) yield
      }
    } else if (n === 2) {
      expectWire(w, LEN, 'runtime.Unknown', 'raw')
      raw = r.bytes()
    } else if (n === 3) {
      expectWire(w, LEN, 'runtime.Unknown', 'contentEncoding')
      contentEncoding = r.string()
    } else r.skip(w)
    if (fieldsRead.add()) yield
  }
  if (contentEncoding) throw badRequest(`protobuf content encoding ${JSON.stringify(contentEncoding)} is not supported`)
  if (!kind || !apiVersion) throw badRequest('protobuf body is missing apiVersion or kind in its type metadata')
  const [group, version] = splitApiVersion(apiVersion)
  const def = typeForKind(group, version, kind)
  if (!def || !hasProtobufForm(def)) {
    throw badRequest(`no kind "${kind}" is registered for version "${apiVersion}" in the protobuf encoding`)
  }
  return { kind, apiVersion, ...(yield* decodeMessage(new Reader(raw), def, typeTable)) }
}

/** Fields and list items read between two checkpoints. */
const fieldsRead = new StepCounter()

/**
 * One message without the envelope, for a type from any table (custom types,
 * tests). Errors are 400s as for whole bodies.
 */
export function decodeMessageOf(bytes: Uint8Array, def: TypeDef, types: TypeTable = typeTable): Record<string, unknown> {
  try {
    return runAtOnce(decodeMessage(new Reader(bytes), def, types))
  } catch (err) {
    throw decodeFailure(err)
  }
}

/**
 * Any failure to decode is the body's fault: a 400. A message nested past
 * what the stack holds (recursive types such as JSON schemas) is refused as
 * too deep, as a JSON or YAML body would be.
 */
function decodeFailure(err: unknown): StatusError {
  if (err instanceof StatusError) return err
  const why = isStackOverflow(err) ? depthMessage() : err instanceof Error ? err.message : String(err)
  return badRequest(`unable to decode protobuf body: ${why}`)
}
