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
import { compareGoStrings, marshalGoUnescaped, type Shape, type StructShape } from './go-json.js'
import { shapeOfObject } from './json-shapes.js'

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function isEmptyValue(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === null || (Array.isArray(v) && v.length === 0)
}

function isCanonicalStruct(v: Record<string, unknown>, shape: StructShape): boolean {
  const index = shape.index
  const fields = shape.fields
  let previous = -1
  for (const k in v) {
    const rank = index.get(k)
    if (rank === undefined || rank <= previous) return false
    previous = rank
    const item = v[k]
    const field = fields[rank]!
    if (field.omitEmpty && isEmptyValue(item)) return false
    if (typeof item === 'object' && item !== null && !isCanonical(item, field.shape)) return false
  }
  return true
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

/**
 * A deep copy of an API object with its keys in the order Go writes them.
 * Made by parsing the text written along its shape: JSON.parse builds the
 * engine's fast objects, which later reads clone and walk quickly (objects
 * grown key by key in a loop may not be).
 */
export function canonicalCopy<T extends object>(obj: T): T {
  const value = obj as Record<string, unknown>
  return JSON.parse(marshalGoUnescaped(value, shapeOfObject(value), shapeOfObject)) as T
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
