/**
 * How large the data a CRD rule reads may be, as upstream derives it from
 * the schema for its cost estimate (apiserver/pkg/cel/common/schemas.go
 * SchemaDeclType, apiserver/pkg/cel/types.go): a string holds at most
 * `maxLength` characters (counted as four bytes each), a list `maxItems`
 * items, a map `maxProperties` entries. Where a bound is absent, the most
 * that fits in one request of 3 MiB is assumed, from the smallest form the
 * elements can take in JSON (`""`, `0`, `{}`, an object's required fields).
 */
import { type CelSchemaProps, escapePropertyName } from './cel-schema.js'

/** The largest request the server accepts, which bounds any one value (upstream's MaxRequestSizeBytes). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024

/** The longest a string can be in one request, less its two quotes. */
const MAX_STRING = MAX_REQUEST_SIZE_BYTES - 2

/** The serialized sizes of RFC 3339 values, quotes included. */
const MAX_DATETIME_JSON = 32
const MAX_DURATION_JSON = 32
const MIN_DURATION_JSON = 3
const JSON_DATE = 12
const MIN_DATETIME_JSON = 21

/** One schema node as sizes: the most elements (characters, items, entries) it holds and its smallest JSON form. */
export interface SizeNode {
  readonly maxElements: number
  readonly minSerializedSize: number
  /** An object's fields, by their CEL (escaped) names. */
  readonly fields?: ReadonlyMap<string, SizeNode>
  /** A list's items or a map's values. */
  readonly elements?: SizeNode
  /** A map's keys. */
  readonly keys?: SizeNode
}

const zeroIfNegative = (n: number): number => Math.max(0, n)

/** Map keys are strings of no declared length: upstream gives them no room, so comparing keys costs nothing. */
const KEY: SizeNode = { maxElements: 0, minSerializedSize: 2 }

const scalar = (minSerializedSize: number, maxElements = 0): SizeNode => ({ maxElements, minSerializedSize })

function stringNode(schema: CelSchemaProps): SizeNode {
  switch (schema.format) {
    case 'byte':
      return scalar(2, schema.maxLength !== undefined ? zeroIfNegative(schema.maxLength) : MAX_STRING)
    case 'duration':
      return scalar(MIN_DURATION_JSON, MAX_DURATION_JSON)
    case 'date':
      return scalar(JSON_DATE, JSON_DATE)
    case 'date-time':
      return scalar(MIN_DATETIME_JSON, MAX_DATETIME_JSON)
  }
  // maxLength counts code points, each up to four bytes.
  if (schema.maxLength !== undefined) return scalar(2, zeroIfNegative(schema.maxLength) * 4)
  if (schema.enum?.length) {
    const longest = Math.max(0, ...schema.enum.map((v) => (typeof v === 'string' ? new TextEncoder().encode(v).length : 0)))
    return scalar(2, longest)
  }
  return scalar(2, MAX_STRING)
}

/** Root of a resource: apiVersion, kind and metadata.name/generateName are always there to read. */
function withTypeAndObjectMeta(schema: CelSchemaProps): CelSchemaProps {
  const p = schema.properties ?? {}
  const meta = p['metadata']?.properties
  if (p['kind']?.type === 'string' && p['apiVersion']?.type === 'string' && meta?.['name']?.type === 'string' && meta['generateName']?.type === 'string') {
    return schema
  }
  const metadata: CelSchemaProps = { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } }
  return { ...schema, properties: { ...p, kind: { type: 'string' }, apiVersion: { type: 'string' }, metadata } }
}

function objectNode(schema: CelSchemaProps): SizeNode {
  const fields = new Map<string, SizeNode>()
  const required = new Set(schema.required ?? [])
  // An object is at least `{}`, plus each required field without a default: `"name":` and its smallest value.
  let minSerializedSize = 2
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const field = sizeNode(property, property['x-kubernetes-embedded-resource'] === true)
    if (!field) continue
    const celName = escapePropertyName(name)
    if (celName !== undefined) fields.set(celName, field)
    if (required.has(name) && property.default === undefined) {
      minSerializedSize += new TextEncoder().encode(name).length + field.minSerializedSize + 4
    }
  }
  return { maxElements: 0, minSerializedSize, fields }
}

/** The sizes of a schema node; undefined where upstream does not expose the node to rules. */
export function sizeNode(schema: CelSchemaProps, resourceRoot: boolean): SizeNode | undefined {
  if (schema['x-kubernetes-int-or-string']) return scalar(1, MAX_STRING)
  const s = resourceRoot ? withTypeAndObjectMeta(schema) : schema
  switch (s.type) {
    case 'array': {
      if (!s.items) return undefined
      const items = sizeNode(s.items, s.items['x-kubernetes-embedded-resource'] === true)
      if (!items) return undefined
      // `[` and `]`, then each item and a comma.
      const maxItems = s.maxItems !== undefined ? zeroIfNegative(s.maxItems) : Math.floor(MAX_STRING / (items.minSerializedSize + 1))
      return { maxElements: maxItems, minSerializedSize: 2, elements: items }
    }
    case 'object': {
      const extra = s.additionalProperties
      if (typeof extra !== 'object') return objectNode(s)
      const values = sizeNode(extra, extra['x-kubernetes-embedded-resource'] === true)
      if (!values) return undefined
      // Each entry is at least `"":`, its value and a comma.
      const max = s.maxProperties !== undefined ? zeroIfNegative(s.maxProperties) : Math.floor(MAX_STRING / (values.minSerializedSize + 6))
      return { maxElements: max, minSerializedSize: 2, elements: values, keys: KEY }
    }
    case 'string':
      return stringNode(s)
    case 'boolean':
      return scalar(4)
    case 'number':
    case 'integer':
      return scalar(1)
  }
  return undefined
}

/**
 * The size of the data at a rule's path (`self`, then fields, `@items`,
 * `@keys`, `@values`), from the node the rule sits on; undefined when the
 * path leaves the schema.
 */
export function sizeAt(root: SizeNode, path: readonly string[]): { min: number; max: number } | undefined {
  // Upstream's estimator drops the first step unread, whatever it names: `self`, `oldSelf`, but also
  // another identifier or the `@items` of a range that had no path of its own, all then read from the root.
  if (path.length === 0) return undefined
  const steps = path.slice(1)
  let node: SizeNode | undefined = root
  for (const step of steps) {
    if (step === '@items' || step === '@values') node = node.elements
    else if (step === '@keys') node = node.keys
    else node = node.fields?.get(step)
    if (!node) return undefined
  }
  return { min: 0, max: node.maxElements }
}

/**
 * How many times a rule may run when nothing above it bounds its repetitions:
 * as many times as the smallest form of its data fits in one request.
 */
export function maxCardinality(minSerializedSize: number): number {
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize + 1))
}
