/**
 * The CEL view of a structural schema: which CEL type each node has, and
 * how a decoded JSON value becomes a value of that type. Upstream derives
 * the same from the schema (apiextensions-apiserver schema/cel/model and
 * apiserver/pkg/cel/types.go): objects with properties are message types
 * whose fields are the (escaped) property names, `additionalProperties`
 * maps are `map<string, T>`, arrays `list<T>`, and int-or-string or
 * schemaless values are `dyn`.
 *
 * Departures: string formats (`date-time`, `duration`, `byte`) stay
 * strings, and equality ignores the set/map list types (order counts).
 */
import type { Environment } from '@marcbachmann/cel-js'

/** A validation rule as written in `x-kubernetes-validations`. */
export interface CelValidationRule {
  rule?: string
  message?: string
  messageExpression?: string
  reason?: string
  fieldPath?: string
  optionalOldSelf?: boolean
}

/** The JSONSchemaProps fields the rules need, as they come out of a CRD. */
export interface CelSchemaProps {
  type?: string
  properties?: Record<string, CelSchemaProps>
  items?: CelSchemaProps
  additionalProperties?: CelSchemaProps | boolean
  'x-kubernetes-validations'?: CelValidationRule[]
  'x-kubernetes-int-or-string'?: boolean
  'x-kubernetes-preserve-unknown-fields'?: boolean
  'x-kubernetes-embedded-resource'?: boolean
  'x-kubernetes-list-type'?: string
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-map-type'?: string
  /** The bounds and facts the static cost estimate sizes data from (cel-sizes.ts). */
  format?: string
  maxLength?: number
  maxItems?: number
  maxProperties?: number
  required?: string[]
  enum?: unknown[]
  default?: unknown
}

/** Identifiers CEL reserves; a property of that name is reached as `__name__`. */
const RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
])

/**
 * The name a property has in CEL (upstream's escaping): reserved words are
 * wrapped in `__`, and `__ . - /` are spelt out; a name with any other
 * character cannot be reached and gets undefined.
 */
export function escapePropertyName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`
  if (!/^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__')
}

/** The base of the generated object classes, so equality can tell objects from maps. */
export class CelObject {}

type ObjectCtor = new () => CelObject

interface ObjectField {
  celName: string
  shape: CelShape
}

/** How one schema node is seen by CEL; `type` is the library's spelling of it. */
export type CelShape =
  | { kind: 'scalar'; type: 'int' | 'double' | 'string' | 'bool' }
  | { kind: 'dyn'; type: 'dyn' }
  | { kind: 'list'; type: string; items: CelShape }
  | { kind: 'map'; type: string; values: CelShape }
  | { kind: 'object'; type: string; ctor: ObjectCtor; fields: Map<string, ObjectField> }

const DYN: CelShape = { kind: 'dyn', type: 'dyn' }

/** The two fields of metadata a rule may read on a resource root or embedded resource. */
const META_FIELDS: Record<string, CelSchemaProps> = { name: { type: 'string' }, generateName: { type: 'string' } }

function withResourceFields(schema: CelSchemaProps): CelSchemaProps {
  return {
    ...schema,
    properties: {
      ...schema.properties,
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', properties: META_FIELDS },
    },
  }
}

/**
 * Builds the shapes of a schema and registers its object types (one class
 * per object node, named `<root>.<field>...`) in `env`. `resourceRoot` adds
 * apiVersion, kind and metadata.name/generateName, as upstream does for the
 * root of a custom resource and for embedded resources.
 */
export function declareShape(env: Environment, schema: CelSchemaProps, typeName: string, resourceRoot: boolean): CelShape {
  if (schema['x-kubernetes-int-or-string']) return DYN
  const embedded = resourceRoot || schema['x-kubernetes-embedded-resource'] === true
  const hasStructure = schema.properties !== undefined || schema.additionalProperties !== undefined || schema.items !== undefined
  if (schema['x-kubernetes-preserve-unknown-fields'] && !hasStructure) return DYN
  switch (schema.type) {
    case 'integer':
      return { kind: 'scalar', type: 'int' }
    case 'number':
      return { kind: 'scalar', type: 'double' }
    case 'string':
      return { kind: 'scalar', type: 'string' }
    case 'boolean':
      return { kind: 'scalar', type: 'bool' }
    case 'array': {
      const items = schema.items ? declareShape(env, schema.items, `${typeName}._item`, false) : DYN
      return { kind: 'list', type: `list<${items.type}>`, items }
    }
    case 'object': {
      const extra = schema.additionalProperties
      if (extra !== undefined && extra !== false && !embedded) {
        const values = extra === true ? DYN : declareShape(env, extra, `${typeName}._value`, false)
        return { kind: 'map', type: `map<string, ${values.type}>`, values }
      }
      return declareObject(env, embedded ? withResourceFields(schema) : schema, typeName)
    }
    default:
      return DYN
  }
}

function declareObject(env: Environment, schema: CelSchemaProps, typeName: string): CelShape {
  const fields = new Map<string, ObjectField>()
  const declared: Record<string, string> = {}
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const celName = escapePropertyName(name)
    if (celName === undefined) continue
    const shape = declareShape(env, property, `${typeName}.${celName}`, false)
    fields.set(name, { celName, shape })
    declared[celName] = shape.type
  }
  // A fresh class per object type: the library finds a value's type by its constructor.
  const ctor = { [typeName]: class extends CelObject {} }[typeName] as ObjectCtor
  env.registerType(typeName, { ctor, fields: declared })
  // Objects compare field by field (self == oldSelf), which the library leaves to us.
  env.registerOperator(`${typeName} == ${typeName}`, (a: unknown, b: unknown) => celEquals(a, b))
  return { kind: 'object', type: typeName, ctor, fields }
}

/** Raised when a value is past CEL_INPUT_LIMITS; the caller reports it as an exhausted budget. */
export class CelInputTooLarge extends Error {}

/** How many values a conversion may still produce, and how deep it may go. */
export interface ConversionBudget {
  valuesLeft: number
  readonly maxDepth: number
}

/** A JSON value whose type the schema does not fix: integral numbers are CEL ints, as Go decodes them to int64. */
function dynValue(value: unknown, depth: number, budget: ConversionBudget): unknown {
  count(depth, budget)
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map((v) => dynValue(v, depth + 1, budget))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dynValue(v, depth + 1, budget)
    return out
  }
  return value
}

function count(depth: number, budget: ConversionBudget): void {
  if (--budget.valuesLeft < 0) throw new CelInputTooLarge('too many values')
  if (depth > budget.maxDepth) throw new CelInputTooLarge('nested too deeply')
}

/**
 * The CEL value of a decoded JSON value of the given shape. Absent and null
 * fields are left out of objects (so `has()` answers false and reading them
 * fails with "no such key", as upstream does); a value of the wrong JSON
 * type is passed through and fails when a rule reads it.
 */
export function toCelValue(shape: CelShape, value: unknown, budget: ConversionBudget, depth = 0): unknown {
  switch (shape.kind) {
    case 'dyn':
      return dynValue(value, depth, budget)
    case 'scalar':
      count(depth, budget)
      if (shape.type === 'int' && typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
      return value
    case 'list':
      count(depth, budget)
      if (!Array.isArray(value)) return value
      return value.map((v) => (v === null ? null : toCelValue(shape.items, v, budget, depth + 1)))
    case 'map': {
      count(depth, budget)
      if (!isRecord(value)) return value
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = toCelValue(shape.values, v, budget, depth + 1)
      return out
    }
    case 'object': {
      count(depth, budget)
      if (!isRecord(value)) return value
      const out = new shape.ctor() as Record<string, unknown>
      for (const [name, field] of shape.fields) {
        const v = value[name]
        if (v !== undefined && v !== null) out[field.celName] = toCelValue(field.shape, v, budget, depth + 1)
      }
      return out
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** CEL equality over converted values: ints and doubles by number, lists in order, maps and objects by entries. */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a == b // loose equality compares a bigint with a number by value
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, i) => celEquals(v, b[i]))
  }
  if (!isRecord(a) || !isRecord(b)) return false
  if (a instanceof CelObject !== b instanceof CelObject || (a instanceof CelObject && a.constructor !== b.constructor)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((k) => Object.hasOwn(b, k) && celEquals(a[k], b[k]))
}
