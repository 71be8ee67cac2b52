/**
 * The component schemas of a custom resource, from its CRD version's
 * `openAPIV3Schema`, in the shape upstream's CRD OpenAPI builder publishes
 * (apiextensions-apiserver controller/openapi/builder): the schema's
 * structural keywords, `apiVersion`/`kind`/`metadata` added at the root and
 * at every embedded resource, the GVK tag, and a list type beside it.
 *
 * Two flavours: `v3` keeps the schema as written, int-or-string fields
 * spelled out as `anyOf: [integer, string]`. `v2` is what kubectl's older
 * OpenAPI v2 reader copes with: no junctors (allOf/anyOf/oneOf/not), no
 * nullable, no defaults, and no type, items or properties where unknown
 * fields are kept (it would otherwise refuse them); a root that keeps unknown
 * fields is published as a bare object.
 */
import type { JSONSchemaProps } from '../crd-schema/schema.js'
import type { JsonObject, JsonValue } from './openapi.js'

export type OpenApiFlavour = 'v3' | 'v2'

export interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'
export const OBJECT_META = `${META}.ObjectMeta`
export const LIST_META = `${META}.ListMeta`

const componentRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` })
const typeMetaField = (): JsonObject => ({ type: 'string' })

/** Keywords copied as they are when set (false, '' and [] count as unset, as Go's omitempty drops them). */
const PLAIN_KEYWORDS = [
  'type',
  'format',
  'title',
  'description',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'nullable',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const satisfies readonly (keyof JSONSchemaProps)[]

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const satisfies readonly (keyof JSONSchemaProps)[]

function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false
  return !Array.isArray(value) || value.length > 0
}

function isSchema(value: unknown): value is JSONSchemaProps {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Plain JSON copy (schemas arrive as parsed JSON, so this only detaches them). */
function json(value: unknown): JsonValue {
  return structuredClone(value) as JsonValue
}

const INT_OR_STRING_ANY_OF: JsonObject[] = [{ type: 'integer' }, { type: 'string' }]

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return JSON.stringify(anyOf) === JSON.stringify(INT_OR_STRING_ANY_OF)
}

/**
 * The v3 spelling of `x-kubernetes-int-or-string` (upstream's Unfold): the
 * two accepted types as anyOf, or as the first allOf when anyOf is taken.
 */
function unfoldIntOrString(out: JsonObject): void {
  if (out['x-kubernetes-int-or-string'] !== true) return
  const allOf = out['allOf']
  const firstAllOf = Array.isArray(allOf) && isSchema(allOf[0]) ? allOf[0] : undefined
  if (isIntOrStringAnyOf(out['anyOf']) || isIntOrStringAnyOf(firstAllOf?.['anyOf'])) return
  const alternatives = structuredClone(INT_OR_STRING_ANY_OF)
  if (out['anyOf'] === undefined) out['anyOf'] = alternatives
  else out['allOf'] = [{ anyOf: alternatives }, ...(Array.isArray(allOf) ? allOf : [])]
}

interface Walk {
  flavour: OpenApiFlavour
  /** v2 adds no resource fields below a node that keeps unknown fields (kubectl would then refuse them). */
  underPreserved: boolean
}

function convert(schema: JSONSchemaProps, walk: Walk): JsonObject {
  const v2 = walk.flavour === 'v2'
  const out: JsonObject = {}
  for (const key of PLAIN_KEYWORDS) if (isSet(schema[key])) out[key] = json(schema[key])
  if (!v2 && schema.default !== undefined && schema.default !== null) out['default'] = json(schema.default)

  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true
  const inner: Walk = { ...walk, underPreserved: walk.underPreserved || (v2 && preserves) }
  let properties = schema.properties
  let items = isSchema(schema.items) ? schema.items : undefined
  if (v2 && (schema.nullable === true || preserves)) {
    properties = undefined
    items = undefined
  }
  if (properties) {
    const converted: JsonObject = {}
    for (const [name, property] of Object.entries(properties)) converted[name] = convert(property, inner)
    out['properties'] = converted
  }
  if (items) out['items'] = convert(items, inner)
  const additional = schema.additionalProperties
  if (isSchema(additional)) out['additionalProperties'] = convert(additional, inner)
  else if (additional === true) out['additionalProperties'] = true

  if (v2) {
    toV2(out, schema, properties)
  } else {
    for (const junctor of JUNCTORS) {
      const list = schema[junctor]
      if (Array.isArray(list) && list.length > 0) out[junctor] = list.map((s) => convert(s, inner))
    }
    if (isSchema(schema.not)) out['not'] = convert(schema.not, inner)
    unfoldIntOrString(out)
  }
  if (schema['x-kubernetes-embedded-resource'] === true && !inner.underPreserved) addResourceFields(out)
  return out
}

/** What kubectl's v2 reader cannot take (upstream's ToStructuralOpenAPIV2), on an already converted node. */
function toV2(out: JsonObject, schema: JSONSchemaProps, properties: Record<string, JSONSchemaProps> | undefined): void {
  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true
  delete out['nullable']
  if (schema.nullable === true) delete out['type']
  if (out['type'] === 'array' && out['items'] === undefined) delete out['type']
  if (preserves && out['type'] === 'object') delete out['type']
  // A field that may be null cannot be required when null is not expressible.
  let required = Array.isArray(out['required']) ? (out['required'] as string[]) : undefined
  if (required && properties) required = required.filter((name) => properties[name]?.nullable !== true)
  if (isSchema(schema.additionalProperties) && schema.additionalProperties.nullable === true) required = undefined
  if (required && required.length > 0) out['required'] = required
  else delete out['required']
}

/** apiVersion, kind and metadata on a resource root or an embedded resource, kind and apiVersion required. */
function addResourceFields(out: JsonObject): void {
  const properties = (out['properties'] ?? {}) as JsonObject
  properties['apiVersion'] = typeMetaField()
  properties['kind'] = typeMetaField()
  properties['metadata'] = componentRef(OBJECT_META)
  out['properties'] = properties
  const required = Array.isArray(out['required']) ? [...(out['required'] as string[])] : []
  for (const name of ['kind', 'apiVersion']) if (!required.includes(name)) required.push(name)
  out['required'] = required
}

/**
 * The schema of a custom resource's kind. Its `metadata` is a reference to
 * ObjectMeta, which the document must carry.
 */
export function customResourceSchema(schema: JSONSchemaProps, gvk: GroupVersionKind, flavour: OpenApiFlavour): JsonObject {
  const tag = { 'x-kubernetes-group-version-kind': [{ ...gvk }] }
  if (flavour === 'v2' && schema['x-kubernetes-preserve-unknown-fields'] === true) {
    // Any property listed here would make kubectl refuse the unknown ones.
    return { type: 'object', ...tag }
  }
  const out = convert(schema, { flavour, underPreserved: false })
  const properties = (out['properties'] ?? {}) as JsonObject
  properties['metadata'] = componentRef(OBJECT_META)
  properties['apiVersion'] = typeMetaField()
  properties['kind'] = typeMetaField()
  out['properties'] = properties
  return { ...out, ...tag }
}

/**
 * The definition name of a custom resource's list: the kind's name with the
 * list kind in place of the kind (`com.example.stable.v1.CronTabList`).
 */
export function customResourceListName(typeName: string, listKind: string): string {
  return `${typeName.slice(0, typeName.lastIndexOf('.') + 1)}${listKind}`
}

/** The list type: items of the kind, ListMeta; upstream gives it no `type`. */
export function customResourceListSchema(typeName: string, listGvk: GroupVersionKind): JsonObject {
  return {
    required: ['items'],
    properties: {
      apiVersion: typeMetaField(),
      items: { type: 'array', items: componentRef(typeName) },
      kind: typeMetaField(),
      metadata: componentRef(LIST_META),
    },
    'x-kubernetes-group-version-kind': [{ ...listGvk }],
  }
}
