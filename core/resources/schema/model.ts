/**
 * One description of a type serves JSON validation, OpenAPI output, protobuf
 * decoding and (later) strategic merge. The tables under `generated/` are
 * written by `tools/gen-types.ts` from upstream's published type facts; code
 * here and elsewhere only reads them.
 */

export type Scalar =
  | 'string'
  | 'boolean'
  | 'int32'
  | 'int64'
  | 'double'
  /** base64 in JSON, raw bytes in protobuf */
  | 'bytes'
  /** RFC 3339 in JSON; protobuf message {seconds, nanos} (meta.v1.Time) */
  | 'time'
  /** RFC 3339 with microseconds in JSON (meta.v1.MicroTime) */
  | 'microtime'
  /** string in JSON; protobuf message {string: 1} (resource.Quantity) */
  | 'quantity'
  /** int or string in JSON; protobuf {type: 1, intVal: 2, strVal: 3} */
  | 'int-or-string'
  /** a Go duration string in JSON; protobuf {duration: 1 (int64 ns)} (meta.v1.Duration) */
  | 'duration'
  /** any JSON value (runtime.RawExtension, JSON); protobuf {raw: 1} holding JSON bytes */
  | 'raw'

export type TypeRef =
  | { scalar: Scalar }
  | { ref: string }
  | { array: TypeRef }
  | { map: TypeRef }

export interface FieldDef {
  /** JSON name */
  name: string
  type: TypeRef
  /** protobuf field number; absent when the field has none */
  proto?: number
  required?: boolean
  /** list semantics for arrays: atomic | set | map */
  listType?: 'atomic' | 'set' | 'map'
  listMapKeys?: string[]
  patchStrategy?: string
  patchMergeKey?: string
  enum?: string[]
}

export interface TypeDef {
  /** upstream definition name, e.g. `io.k8s.api.core.v1.ConfigMap` */
  name: string
  fields: FieldDef[]
  /** group/version/kind for top-level kinds */
  gvk?: { group: string; version: string; kind: string }
  /**
   * Go structs embedded without a JSON name: their fields sit at this level
   * in JSON but travel in protobuf as one message at field number `proto`,
   * of the type `type` (whose field names say which fields it carries).
   */
  embedded?: { proto: number; type: string }[]
  /**
   * Go types with a JSON form of their own (apiextensions' JSONSchemaPropsOrArray,
   * JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray): the value is a JSON
   * object, array or boolean, and which of them it is picks its type. Such a
   * type has no JSON fields; in protobuf it travels as a wrapper message whose
   * field for the form at hand carries the value.
   */
  jsonForms?: JsonForms
}

/** One field of the wrapper message per JSON form the type accepts (see TypeDef.jsonForms). */
export interface JsonForms {
  object?: FieldDef
  array?: FieldDef
  boolean?: FieldDef
  /** Go's decoding error for a value of another JSON kind; without it such a value decodes as absent. */
  invalid?: string
}

/** The form a JSON value takes in a type with several JSON forms; undefined when it takes none. */
export function jsonFormOf(forms: JsonForms, value: unknown): FieldDef | undefined {
  if (Array.isArray(value)) return forms.array
  if (typeof value === 'boolean') return forms.boolean
  return value !== null && typeof value === 'object' ? forms.object : undefined
}

export type TypeTable = Readonly<Record<string, TypeDef>>

const fieldMaps = new WeakMap<TypeDef, Map<string, FieldDef>>()

/** A type's fields by name, made once per type (a body of a million small objects made a map for each). */
export function fieldsByName(def: TypeDef): Map<string, FieldDef> {
  let fields = fieldMaps.get(def)
  if (!fields) {
    fields = new Map(def.fields.map((f) => [f.name, f]))
    fieldMaps.set(def, fields)
  }
  return fields
}
