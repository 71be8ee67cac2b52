/**
 * Which order Go writes each value in, derived once per type: built-in kinds
 * from the generated type tables with their Go declaration order
 * (generated/go-field-order.ts), discovery and /version from
 * discovery-types.ts. A kind no table knows (a custom resource) is
 * unstructured in upstream's server, a map all the way down, so every key is
 * sorted.
 */
import { type Scalar, typeForKind, typeTable, type TypeDef, type TypeRef } from '../resources/schema/index.js'
import { discoveryKinds, discoveryTypes } from './discovery-types.js'
import { goEmptyFields } from './generated/go-empty-fields.js'
import { goFieldOrder } from './generated/go-field-order.js'
import { EMPTY_STRUCT, type FieldShape, type Shape, type StructShape, UNSTRUCTURED, VERBATIM } from './go-json.js'

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'
const OBJECT: Shape = { kind: 'object' }

/**
 * Fields left out when empty in any copy, a store's canonical one too: the
 * Status family and list metadata, and every TypeMeta. The rest of Go's
 * `omitempty` (goOmitEmpty) and the fields it writes though unset come from
 * generated/go-empty-fields.ts and apply to what is served and stored.
 */
const OMIT_EMPTY: Readonly<Record<string, readonly string[]>> = {
  [`${META}.Status`]: ['status', 'message', 'reason', 'code'],
  [`${META}.StatusDetails`]: ['name', 'group', 'kind', 'uid', 'causes', 'retryAfterSeconds'],
  [`${META}.StatusCause`]: ['reason', 'message', 'field'],
  [`${META}.ListMeta`]: ['selfLink', 'resourceVersion', 'continue'],
}
const TYPE_META = ['kind', 'apiVersion']

/** Fields holding raw JSON that is in fact an API object, written in its own kind's order. */
const EMBEDDED_OBJECTS: Readonly<Record<string, readonly string[]>> = {
  [`${META}.TableRow`]: ['object'],
}

function typeNamed(name: string): TypeDef | undefined {
  return typeTable[name] ?? discoveryTypes[name]
}

/** The fields of a type in Go declaration order; any the order does not name keep the table's order, after it. */
function declarationOrder(def: TypeDef): string[] {
  const order = goFieldOrder[def.name]
  if (order === undefined) return def.fields.map((f) => f.name)
  const names = order.split(' ')
  for (const f of def.fields) if (!names.includes(f.name)) names.push(f.name)
  return names
}

const structs = new Map<string, StructShape>()

function structShape(name: string): Shape {
  const cached = structs.get(name)
  if (cached) return cached
  const def = typeNamed(name)
  if (!def) return VERBATIM
  const shape: StructShape = { kind: 'struct', fields: [], index: new Map(), unset: [] }
  structs.set(name, shape)
  const types = new Map(def.fields.map((f) => [f.name, f.type]))
  const objects = EMBEDDED_OBJECTS[name] ?? []
  const order = declarationOrder(def)
  const empties = goEmptyFields[name]
  const omitEmpty = [...(OMIT_EMPTY[name] ?? []), ...(order[0] === 'kind' && order[1] === 'apiVersion' ? TYPE_META : [])]
  const dropped = new Set(words(empties?.dropped))
  const written = new Set(words(empties?.written))
  const nulls = new Set(words(empties?.nulls))
  const fields: FieldShape[] = []
  for (const field of order) {
    const type = types.get(field)
    if (!type) continue
    const shape = objects.includes(field) ? OBJECT : refShape(type)
    const whenUnset = nulls.has(field) ? 'null' : written.has(field) ? writtenWhenUnset(type, shape) : undefined
    fields.push({
      name: field,
      key: `${JSON.stringify(field)}:`,
      shape,
      omitEmpty: omitEmpty.includes(field),
      ...(dropped.has(field) ? { goOmitEmpty: true as const } : {}),
      ...(whenUnset === undefined ? {} : { whenUnset }),
    })
  }
  shape.fields = fields
  shape.index = new Map(fields.map((f, i) => [f.name, i]))
  shape.unset = fields.flatMap((f, i) => (f.whenUnset === undefined ? [] : [i]))
  return shape
}

function words(list: string | undefined): string[] {
  return list ? list.split(' ') : []
}

/** Go's JSON for a zero value of each scalar of the type tables (times, raw JSON: null; Quantity: "0"). */
const SCALAR_ZEROS: Readonly<Record<Scalar, string>> = {
  string: '""',
  boolean: 'false',
  int32: '0',
  int64: '0',
  double: '0',
  bytes: 'null',
  time: 'null',
  microtime: 'null',
  quantity: '"0"',
  'int-or-string': '0',
  duration: '"0s"',
  raw: 'null',
}

/** What Go writes for an unset field it always writes (see FieldShape.whenUnset). */
function writtenWhenUnset(type: TypeRef, shape: Shape): string | undefined {
  if ('scalar' in type) return SCALAR_ZEROS[type.scalar]
  return shape.kind === 'struct' ? EMPTY_STRUCT : undefined
}

function refShape(type: TypeRef): Shape {
  if ('ref' in type) return structShape(type.ref)
  if ('array' in type) {
    const item = refShape(type.array)
    // Scalars keep their order: the array as a whole is written as it is.
    return item === VERBATIM ? VERBATIM : { kind: 'array', item }
  }
  if ('map' in type) return { kind: 'map', value: refShape(type.map) }
  return VERBATIM
}

/** The shape of a named type (a definition name such as `io.k8s.api.core.v1.Pod`). */
export function shapeOfType(name: string): Shape {
  return structShape(name)
}

export const STATUS_SHAPE = shapeOfType(`${META}.Status`)
export const VERSION_INFO_SHAPE = shapeOfType('io.k8s.apimachinery.pkg.version.Info')

/** `apps/v1` -> [apps, v1]; `v1` -> ['', v1]. */
function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
}

const byKind = new Map<string, Shape>()

/**
 * The shape of an API object from its own `apiVersion` and `kind`: its Go
 * type for built-in kinds, discovery documents and Status, else (custom
 * resources and their lists) unstructured.
 */
export function shapeOfObject(value: Record<string, unknown>): Shape {
  const kind = value['kind']
  const apiVersion = value['apiVersion']
  if (typeof kind !== 'string') return UNSTRUCTURED
  const key = `${typeof apiVersion === 'string' ? apiVersion : ''}/${kind}`
  const cached = byKind.get(key)
  if (cached) return cached
  const [group, version] = splitApiVersion(typeof apiVersion === 'string' ? apiVersion : '')
  // Status and discovery documents are meta types, served in the core group (and apidiscovery.k8s.io).
  const meta = group === '' || group === 'apidiscovery.k8s.io'
  const discovery = meta ? discoveryKinds[kind] : undefined
  const def =
    meta && kind === 'Status' ? typeNamed(`${META}.Status`) : discovery ? typeNamed(discovery) : typeForKind(group, version, kind)
  const shape = def ? structShape(def.name) : UNSTRUCTURED
  byKind.set(key, shape)
  return shape
}
