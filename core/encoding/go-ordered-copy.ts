/**
 * What JSON.parse makes of the text go-json.ts writes along a shape, built
 * directly: the same keys in the same order, the same values, and no text
 * written or parsed. Every write keeps its object in Go's order (canonical.ts),
 * and writing the text in JavaScript to parse it again cost a create some
 * 20 µs for a ConfigMap and 60 µs for a Pod; a walk that builds the copy
 * takes a fraction of that.
 *
 * Each branch mirrors go-json.ts's `write` for the same shape, so that the
 * two never disagree (test/unit/encoding/go-ordered-copy.test.ts compares
 * them over every kind's sample): a value JSON writes in its own way (a
 * number that is not finite, an object in a verbatim place, a Date) goes
 * through JSON itself.
 */
import { sortInSteps } from '../machinery/sort-in-steps.js'
import { type Checkpointed, StepCounter, UNITS_PER_STEP } from '../machinery/time-slice.js'
import {
  compareGoStrings,
  isEmptyValue,
  isRecord,
  keysInDeclarationOrder,
  type ObjectShapeOf,
  type Shape,
  sortedKeys,
  type StructShape,
  unsetText,
} from './go-json.js'

const NONE: readonly number[] = []

/**
 * `value` copied along `shape`: as Go encodes it (`asGo`: its always-written
 * fields added, its empty `omitempty` ones left out) or only reordered.
 */
export function copyInGoOrder(value: unknown, shape: Shape, objectShape: ObjectShapeOf, asGo: boolean): unknown {
  switch (shape.kind) {
    case 'struct':
      return isRecord(value) ? copyStruct(value, shape, objectShape, asGo) : jsonValue(value)
    case 'array': {
      if (!Array.isArray(value)) return jsonValue(value)
      const out = new Array<unknown>(value.length)
      for (let i = 0; i < value.length; i++) out[i] = copyInGoOrder(value[i] ?? null, shape.item, objectShape, asGo)
      return out
    }
    case 'map': {
      if (!isRecord(value)) return jsonValue(value)
      const out: Record<string, unknown> = {}
      for (const k of sortedKeys(value)) {
        const item = value[k]
        if (item !== undefined) put(out, k, copyInGoOrder(item, shape.value, objectShape, asGo))
      }
      return out
    }
    case 'unstructured':
      return copyUnstructured(value)
    case 'object':
      return isRecord(value) ? copyInGoOrder(value, objectShape(value), objectShape, asGo) : jsonValue(value)
    default:
      return jsonValue(value)
  }
}

/**
 * `v` copied along `shape`; `copied` holds the copies of fields already made
 * (copyInGoOrderInSteps copies a struct's large fields first, in steps).
 */
function copyStruct(
  v: Record<string, unknown>,
  shape: StructShape,
  objectShape: ObjectShapeOf,
  asGo: boolean,
  copied?: ReadonlyMap<string, unknown>,
): Record<string, unknown> {
  const index = shape.index
  const unknownRank = shape.fields.length
  const out: Record<string, unknown> = {}
  // Fields Go writes though unset go in their declared places among the keys present.
  const unset = asGo ? shape.unset : NONE
  let next = 0
  for (const k of keysInDeclarationOrder(v, shape)) {
    const rank = index.get(k) ?? unknownRank
    while (next < unset.length && unset[next]! < rank) {
      const field = shape.fields[unset[next++]!]!
      put(out, field.name, JSON.parse(unsetText(field)))
    }
    if (unset[next] === rank) next++
    const field = rank === unknownRank ? undefined : shape.fields[rank]
    const item = v[k]
    if (item === undefined || (item === null && asGo)) {
      if (asGo && field?.whenUnset !== undefined) put(out, k, JSON.parse(unsetText(field)))
      continue
    }
    if (field && (field.omitEmpty || (asGo && field.goOmitEmpty)) && isEmptyValue(item)) continue
    put(out, k, copied?.has(k) ? copied.get(k) : field ? copyInGoOrder(item, field.shape, objectShape, asGo) : jsonValue(item))
  }
  while (next < unset.length) {
    const field = shape.fields[unset[next++]!]!
    put(out, field.name, JSON.parse(unsetText(field)))
  }
  return out
}

function copyUnstructured(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length)
    for (let i = 0; i < v.length; i++) out[i] = copyUnstructured(v[i] ?? null)
    return out
  }
  if (!isRecord(v)) return jsonValue(v)
  const out: Record<string, unknown> = {}
  for (const k of sortedKeys(v)) {
    const item = v[k]
    if (item !== undefined) put(out, k, copyUnstructured(item))
  }
  return out
}

/**
 * What JSON.parse(JSON.stringify(v) ?? 'null') gives: without the text for
 * the plain values, arrays and objects decoded JSON is made of (raw JSON
 * such as managedFields' fieldsV1 among them); through it for anything JSON
 * writes its own way (a Date, an object with `toJSON`, a boxed value).
 */
function jsonValue(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v
    case 'number':
      // JSON writes -0 as 0, and what is not finite as null.
      return Number.isFinite(v) ? (v === 0 ? 0 : v) : null
    case 'object':
      return v === null ? null : isPlainData(v) ? plainJsonCopy(v) : throughText(v)
    default:
      return throughText(v)
  }
}

function throughText(v: unknown): unknown {
  const text = JSON.stringify(v)
  return text === undefined ? null : (JSON.parse(text) as unknown)
}

function isPlainData(v: object): boolean {
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false
  const proto = Object.getPrototypeOf(v) as unknown
  return proto === Object.prototype || proto === null || Array.isArray(v)
}

/** JSON leaves out of an object, and writes as null in an array, what it cannot write. */
const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol'

function plainJsonCopy(v: object): unknown {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length)
    for (let i = 0; i < v.length; i++) out[i] = skipped(v[i]) ? null : jsonValue(v[i])
    return out
  }
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const item = (v as Record<string, unknown>)[k]
    if (!skipped(item)) put(out, k, jsonValue(item))
  }
  return out
}

/** A key set as JSON.parse sets it: `__proto__` too, as an own property. */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  else out[key] = value
}

/** Shared by the walks of every request: it only decides when they yield. */
const copied = new StepCounter()
const checkpointDue = (): boolean => copied.add()

const isContainer = (v: unknown): v is object => typeof v === 'object' && v !== null

/**
 * copyInGoOrder as checkpointed work, for an object of megabytes, whose
 * copy in one piece held the thread for hundreds of milliseconds (a level
 * of 250,000 keys: sorting them, copying them one by one). The copy is the
 * same; the walk yields every few thousand values, and sorts a level's keys
 * in steps.
 */
export function* copyInGoOrderInSteps(value: unknown, shape: Shape, objectShape: ObjectShapeOf, asGo: boolean): Checkpointed<unknown> {
  if (!isContainer(value)) return copyInGoOrder(value, shape, objectShape, asGo)
  switch (shape.kind) {
    case 'struct':
      if (isRecord(value)) return yield* structInSteps(value, shape, objectShape, asGo)
      break
    case 'array': {
      if (!Array.isArray(value)) break
      const item = shape.item
      return yield* itemsInSteps(value, (v) => v ?? null, (v) => copyInGoOrderInSteps(v, item, objectShape, asGo))
    }
    case 'map': {
      if (!isRecord(value)) break
      const item = shape.value
      return yield* sortedEntriesInSteps(value, (v) => copyInGoOrderInSteps(v, item, objectShape, asGo))
    }
    case 'unstructured':
      return yield* unstructuredInSteps(value)
    case 'object':
      if (isRecord(value)) return yield* copyInGoOrderInSteps(value, objectShape(value), objectShape, asGo)
      break
  }
  return yield* jsonValueInSteps(value)
}

/** A struct's fields that hold objects copied in steps first, then the struct at once around them. */
function* structInSteps(v: Record<string, unknown>, shape: StructShape, objectShape: ObjectShapeOf, asGo: boolean): Checkpointed<Record<string, unknown>> {
  const copies = new Map<string, unknown>()
  for (const k of Object.keys(v)) {
    const item = v[k]
    if (!isContainer(item)) continue
    const rank = shape.index.get(k)
    const field = rank === undefined ? undefined : shape.fields[rank]
    copies.set(k, field ? yield* copyInGoOrderInSteps(item, field.shape, objectShape, asGo) : yield* jsonValueInSteps(item))
    if (checkpointDue()) yield
  }
  return copyStruct(v, shape, objectShape, asGo, copies)
}

/** An array's items, each through `normal` first. */
function* itemsInSteps(v: readonly unknown[], normal: (item: unknown) => unknown, copy: (item: unknown) => Checkpointed<unknown>): Checkpointed<unknown[]> {
  const out = new Array<unknown>(v.length)
  for (let i = 0; i < v.length; i++) {
    out[i] = yield* copy(normal(v[i]))
    if (checkpointDue()) yield
  }
  return out
}

/** A map's entries in Go's order of its keys (sortedKeys), undefined ones left out. */
function* sortedEntriesInSteps(v: Record<string, unknown>, copy: (item: unknown) => Checkpointed<unknown>): Checkpointed<Record<string, unknown>> {
  const keys = Object.keys(v)
  if (keys.length > UNITS_PER_STEP) yield
  yield* sortInSteps(keys, compareGoStrings)
  return yield* entriesInSteps(v, keys, (item) => item === undefined, copy)
}

function* entriesInSteps(
  v: Record<string, unknown>,
  keys: readonly string[],
  leftOut: (item: unknown) => boolean,
  copy: (item: unknown) => Checkpointed<unknown>,
): Checkpointed<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!
    const item = v[k]
    if (!leftOut(item)) put(out, k, yield* copy(item))
    if (checkpointDue()) yield
  }
  return out
}

/** copyUnstructured in steps. */
function* unstructuredInSteps(v: unknown): Checkpointed<unknown> {
  if (Array.isArray(v)) return yield* itemsInSteps(v, (item) => item ?? null, unstructuredInSteps)
  if (!isRecord(v)) return jsonValue(v)
  return yield* sortedEntriesInSteps(v, unstructuredInSteps)
}

/** jsonValue in steps: plain data walked, anything else through JSON's text as before. */
function* jsonValueInSteps(v: unknown): Checkpointed<unknown> {
  if (!isContainer(v) || !isPlainData(v)) return jsonValue(v)
  if (Array.isArray(v)) return yield* itemsInSteps(v, (item) => (skipped(item) ? null : item), jsonValueInSteps)
  const object = v as Record<string, unknown>
  const keys = Object.keys(object)
  if (keys.length > UNITS_PER_STEP) yield
  return yield* entriesInSteps(object, keys, skipped, jsonValueInSteps)
}
