/**
 * Objects already in Go's order: the fast way to upstream's JSON.
 *
 * Writing JSON along a shape in JavaScript is a few times slower than the
 * engine's own JSON.stringify. So stores keep objects in canonical order
 * (canonicalCopy when they commit one), and encoding first checks that an
 * object still is (isCanonical: a walk over its keys, no allocation); only
 * an object that is not (a body just decoded, an object a handler changed)
 * is written field by field.
 */
import { compareGoStrings, isEmptyValue, isRecord, type Shape, type StructShape, unsetText } from './go-json.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { copyInGoOrder, copyInGoOrderInSteps } from './go-ordered-copy.js'
import { shapeOfObject } from './json-shapes.js'

function isCanonicalStruct(v: Record<string, unknown>, shape: StructShape): boolean {
  const index = shape.index
  const fields = shape.fields
  let previous = -1
  // Every field Go writes though unset must be there, as Go writes it.
  let unsetPresent = 0
  for (const k in v) {
    const rank = index.get(k)
    if (rank === undefined || rank <= previous) return false
    previous = rank
    const item = v[k]
    const field = fields[rank]!
    if (item === undefined) {
      // JSON.stringify leaves it out, as Go leaves out only fields without whenUnset.
      if (field.whenUnset !== undefined) return false
      continue
    }
    if (field.whenUnset !== undefined) unsetPresent++
    if (item === null) {
      if (field.whenUnset === undefined || unsetText(field) !== 'null') return false
      continue
    }
    if ((field.omitEmpty || field.goOmitEmpty) && isEmptyValue(item)) return false
    if (typeof item === 'object' && !isCanonical(item, field.shape)) return false
  }
  return unsetPresent === shape.unset.length
}

function isCanonicalMap(v: Record<string, unknown>, value: Shape | undefined): boolean {
  let previous: string | undefined
  for (const k in v) {
    if (previous !== undefined && compareGoStrings(previous, k) >= 0) return false
    previous = k
    // Keys that are array indices are enumerated first, in numeric order: the
    // comparison above finds where that is not Go's order ("10" before "9").
    const item = v[k]
    if (typeof item === 'object' && item !== null && !isCanonical(item, value ?? UNSTRUCTURED_VALUE)) return false
  }
  return true
}

const UNSTRUCTURED_VALUE: Shape = { kind: 'unstructured' }

/** True when JSON.stringify(v) already writes what Go would along `shape` (before escaping). */
export function isCanonical(v: unknown, shape: Shape): boolean {
  if (typeof v !== 'object' || v === null) return true
  switch (shape.kind) {
    case 'struct':
      return !isRecord(v) || isCanonicalStruct(v, shape)
    case 'array':
      if (!Array.isArray(v)) return true
      for (const item of v) if (!isCanonical(item, shape.item)) return false
      return true
    case 'map':
      return !isRecord(v) || isCanonicalMap(v, shape.value.kind === 'verbatim' ? VERBATIM_VALUE : shape.value)
    case 'unstructured':
      if (Array.isArray(v)) return v.every((item) => isCanonical(item, shape))
      return isCanonicalMap(v as Record<string, unknown>, undefined)
    case 'object':
      return !isRecord(v) || isCanonical(v, shapeOfObject(v))
    default:
      return true
  }
}

const VERBATIM_VALUE: Shape = { kind: 'verbatim' }

/** A deep copy of an API object with its keys in the order Go writes them, its values as they are. */
export function canonicalCopy<T extends object>(obj: T): T {
  const value = obj as Record<string, unknown>
  return copyInGoOrder(value, shapeOfObject(value), shapeOfObject, false) as T
}

/**
 * A copy of a built-in object as upstream stores it, its Go struct encoded:
 * in Go's order, unset fields Go always writes written (`source: {}`, a
 * template's `creationTimestamp: null`, `reportingComponent: ""`), and empty
 * ones it omits left out (`webhooks: []`, `hostNetwork: false`). What the
 * client sent is upstream's decoded struct; what the server keeps and
 * serves, that struct's JSON. A custom resource is copied as it is.
 */
export function goEncodedCopy<T extends object>(obj: T): T {
  const value = obj as Record<string, unknown>
  return copyInGoOrder(value, shapeOfObject(value), shapeOfObject, true) as T
}

/** `obj` itself when it already is as Go encodes it (an update of a stored object that changes nothing), else goEncodedCopy. */
export function asGoEncodes<T extends object>(obj: T): T {
  const value = obj as Record<string, unknown>
  return isCanonical(value, shapeOfObject(value)) ? obj : goEncodedCopy(obj)
}

/** canonicalCopy as checkpointed work, for an object of megabytes. */
export function* canonicalCopyInSteps<T extends object>(obj: T): Checkpointed<T> {
  const value = obj as Record<string, unknown>
  return (yield* copyInGoOrderInSteps(value, shapeOfObject(value), shapeOfObject, false)) as T
}

/** asGoEncodes as checkpointed work, for an object of megabytes. */
export function* asGoEncodesInSteps<T extends object>(obj: T): Checkpointed<T> {
  const value = obj as Record<string, unknown>
  const shape = shapeOfObject(value)
  // A walk of the keys that allocates nothing, and mostly stops at the first key (a body puts apiVersion before kind).
  if (isCanonical(value, shape)) return obj
  yield
  return (yield* copyInGoOrderInSteps(value, shape, shapeOfObject, true)) as T
}

/** `metadata` with `resourceVersion` set, in its canonical place when it was missing. */
export function withResourceVersion(obj: Record<string, unknown>, metadata: Record<string, unknown>, resourceVersion: string): Record<string, unknown> {
  if (Object.hasOwn(metadata, 'resourceVersion')) {
    metadata['resourceVersion'] = resourceVersion
    return metadata
  }
  const objectShape = shapeOfObject(obj)
  const metaShape = objectShape.kind === 'struct' ? objectShape.fields[objectShape.index.get('metadata') ?? -1]?.shape : undefined
  const rank = (k: string): number =>
    metaShape?.kind === 'struct' ? (metaShape.index.get(k) ?? metaShape.fields.length) : 0
  const placed = metaShape?.kind === 'struct'
  const before = (k: string) => (placed ? rank(k) < rank('resourceVersion') : compareGoStrings(k, 'resourceVersion') < 0)
  const out: Record<string, unknown> = {}
  let done = false
  for (const k of Object.keys(metadata)) {
    if (!done && !before(k)) {
      out['resourceVersion'] = resourceVersion
      done = true
    }
    out[k] = metadata[k]
  }
  if (!done) out['resourceVersion'] = resourceVersion
  return out
}
