/**
 * The rules every OpenAPI v3 schema of an apiextensions.k8s.io/v1 CRD obeys
 * besides being structural (upstream's ValidateCustomResourceDefinitionOpenAPISchema
 * with the options a new v1 CRD is validated with): keywords it does not
 * support, defaults where pruning could not place them, and the list and map
 * topology extensions. The CEL rules of `x-kubernetes-validations` are checked
 * elsewhere.
 */
import { goStrings } from '../machinery/go-format.js'
import { forbiddenField, invalid, notSupported, required, type FieldError, type FieldPath } from '../machinery/field.js'
import { isPlainObject } from '../machinery/object.js'
import { additionalPropertiesSchema, isEmbeddedResource, itemsSchema, RESOURCE_META_FIELDS, type JSONSchemaProps } from './schema.js'
import { appendAll } from '../machinery/append-all.js'

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string']

interface Context {
  isRoot: boolean
  /** Inside the schema of apiVersion, kind or metadata, at the root or of an embedded resource. */
  insideResourceMeta: boolean
  /** Why a default may not be given here, when it may not. */
  defaultsForbidden?: string
}

export function validateSchemaRules(schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (schema.nullable) errs.push(forbiddenField(path.child('nullable'), 'nullable cannot be true at the root'))
  appendAll(errs, rules(schema, path, { isRoot: true, insideResourceMeta: false }))
  return errs
}

const hasEntries = (record: object | undefined): boolean => record !== undefined && Object.keys(record).length > 0

/** Keywords upstream cannot turn into its structural form; their own rules report them. */
export function hasUnconvertibleKeywords(schema: JSONSchemaProps): boolean {
  if (schema.$ref !== undefined || schema.id || schema.additionalItems !== undefined) return true
  if (hasEntries(schema.patternProperties) || hasEntries(schema.definitions) || schema.dependencies !== undefined) return true
  if (Array.isArray(schema.items)) return true
  const children: (JSONSchemaProps | undefined)[] = [
    itemsSchema(schema),
    additionalPropertiesSchema(schema),
    schema.not,
    ...Object.values(schema.properties ?? {}),
    ...(schema.allOf ?? []),
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
  ]
  return children.some((child) => child !== undefined && hasUnconvertibleKeywords(child))
}

function keywordRules(s: JSONSchemaProps, path: FieldPath, ctx: Context): FieldError[] {
  const errs: FieldError[] = []
  if (s.type && !OPENAPI_V3_TYPES.includes(s.type)) errs.push(notSupported(path.child('type'), s.type, OPENAPI_V3_TYPES))
  if (s.default !== undefined && ctx.defaultsForbidden !== undefined) {
    const detail = ctx.defaultsForbidden ? `must not be set ${ctx.defaultsForbidden}` : 'must not be set'
    errs.push(forbiddenField(path.child('default'), detail))
  }
  const unsupported = (name: string) => errs.push(forbiddenField(path.child(name), `${name} is not supported`))
  if (s.id) unsupported('id')
  if (s.additionalItems !== undefined) unsupported('additionalItems')
  if (hasEntries(s.patternProperties)) unsupported('patternProperties')
  if (hasEntries(s.definitions)) unsupported('definitions')
  if (s.dependencies !== undefined) unsupported('dependencies')
  if (s.$ref !== undefined) unsupported('$ref')
  if (s.type === 'null') {
    errs.push(forbiddenField(path.child('type'), 'type cannot be set to null, use nullable as an alternative'))
  }
  if (Array.isArray(s.items) && s.items.length > 0) {
    errs.push(forbiddenField(path.child('items'), 'items must be a schema object and not an array'))
  }
  if (ctx.insideResourceMeta && isEmbeddedResource(s)) {
    errs.push(forbiddenField(path.child('x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'))
  }
  return errs
}

function rules(s: JSONSchemaProps, path: FieldPath, ctx: Context): FieldError[] {
  const errs = keywordRules(s, path, ctx)
  const child = { ...ctx, isRoot: false }
  if (s.uniqueItems) {
    errs.push(
      forbiddenField(path.child('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'),
    )
  }
  if (s.additionalProperties !== undefined) {
    if (hasEntries(s.properties) && (s.additionalProperties === false || isPlainObject(s.additionalProperties))) {
      errs.push(forbiddenField(path.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'))
    }
    const additional = additionalPropertiesSchema(s)
    // Pruning could not tell which metadata field such a default would land in.
    const sub = ctx.insideResourceMeta ? { ...child, defaultsForbidden: 'inside additionalProperties applying to object metadata' } : child
    if (additional) appendAll(errs, rules(additional, path.child('additionalProperties'), sub))
  }
  for (const name of Object.keys(s.properties ?? {}).sort()) {
    const property = s.properties?.[name]
    if (!property) continue
    let sub: Context = child
    if ((ctx.isRoot || isEmbeddedResource(s)) && RESOURCE_META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true }
      if (ctx.isRoot) sub = { ...sub, defaultsForbidden: `in top-level ${name}` }
    }
    appendAll(errs, rules(property, path.child('properties').key(name), sub))
  }
  if (s.not) appendAll(errs, rules(s.not, path.child('not'), child))
  s.allOf?.forEach((n, i) => appendAll(errs, rules(n, path.child('allOf').index(i), child)))
  s.oneOf?.forEach((n, i) => appendAll(errs, rules(n, path.child('oneOf').index(i), child)))
  s.anyOf?.forEach((n, i) => appendAll(errs, rules(n, path.child('anyOf').index(i), child)))
  const items = itemsSchema(s)
  if (items) appendAll(errs, rules(items, path.child('items'), child))
  if (Array.isArray(s.items)) s.items.forEach((n, i) => appendAll(errs, rules(n, path.child('items').index(i), child)))

  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(invalid(path.child('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'))
  }
  errs.push(...mapTypeRules(s, path), ...listTypeRules(s, path), ...listKeyPresenceRules(s, path))
  return errs
}

function typeMismatch(s: JSONSchemaProps, path: FieldPath, type: string, detail: string): FieldError[] {
  if (s.type === type) return []
  return [s.type ? invalid(path.child('type'), s.type, detail) : required(path.child('type'), detail)]
}

function mapTypeRules(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const mapType = s['x-kubernetes-map-type']
  if (mapType === undefined) return []
  const errs = typeMismatch(s, path, 'object', 'must be object if x-kubernetes-map-type is specified')
  if (mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(notSupported(path.child('x-kubernetes-map-type'), mapType, ['atomic', 'granular']))
  }
  return errs
}

function listTypeRules(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const listType = s['x-kubernetes-list-type']
  const keys = s['x-kubernetes-list-map-keys'] ?? []
  const errs: FieldError[] = []
  const items = itemsSchema(s)
  if (listType !== undefined && s.type !== 'array') {
    appendAll(errs, typeMismatch(s, path, 'array', 'must be array if x-kubernetes-list-type is specified'))
  } else if (listType === 'set' && items) {
    // Set members are compared whole, so nested lists and maps must be atomic.
    const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set'
    const itemListType = items['x-kubernetes-list-type']
    if (items.type === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      errs.push(invalid(path.child('items').child('x-kubernetes-list-type'), itemListType, detail))
    }
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      // Upstream shows the item's list type here, which is nil for a map.
      errs.push(invalid(path.child('items').child('x-kubernetes-map-type'), itemListType ?? null, detail))
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) {
    errs.push(notSupported(path.child('x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']))
  }
  if (keys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty'
    if (listType === undefined) errs.push(required(path.child('x-kubernetes-list-type'), detail))
    else if (listType !== 'map') errs.push(invalid(path.child('x-kubernetes-list-type'), listType, detail))
  }
  if (listType !== 'map') return errs

  if (keys.length === 0) {
    errs.push(required(path.child('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'))
  }
  if (s.items === undefined) {
    errs.push(required(path.child('items'), 'must have a schema if x-kubernetes-list-type is map'))
  } else if (!items) {
    errs.push(invalid(path.child('items'), s.items, 'must only have a single schema if x-kubernetes-list-type is map'))
  } else if (items.type !== 'object') {
    errs.push(invalid(path.child('items').child('type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"))
  } else {
    const seen = new Set<string>()
    for (const key of keys) {
      const property = items.properties?.[key]
      if (!property) {
        errs.push(invalid(path.child('x-kubernetes-list-map-keys'), goStrings(keys), 'entries must all be names of item properties'))
      } else if (property.type === 'array' || property.type === 'object') {
        // Upstream shows the item's type (object) rather than the key's.
        const keyTypePath = path.child('items').child('properties').key(key).child('type')
        errs.push(invalid(keyTypePath, items.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
      }
      if (seen.has(key)) {
        errs.push(invalid(path.child('x-kubernetes-list-map-keys'), goStrings(keys), 'must not contain duplicate entries'))
      }
      seen.add(key)
    }
  }
  return errs
}

/** Keys of a map list must be present in every item; members of sets and maps cannot be null. */
function listKeyPresenceRules(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const listType = s['x-kubernetes-list-type']
  const items = itemsSchema(s)
  if (!items || (listType !== 'set' && listType !== 'map')) return []
  const errs: FieldError[] = []
  if (items.nullable) {
    errs.push(forbiddenField(path.child('items').child('nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`))
  }
  if (listType !== 'map') return errs
  const requiredNames = new Set(items.required ?? [])
  for (const key of s['x-kubernetes-list-map-keys'] ?? []) {
    const property = items.properties?.[key]
    if (!property) continue
    const keyPath = path.child('items').child('properties').key(key)
    if (!requiredNames.has(key) && property.default === undefined) {
      errs.push(
        required(
          keyPath.child('default'),
          'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
        ),
      )
    }
    if (property.nullable) {
      errs.push(forbiddenField(keyPath.child('nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'))
    }
  }
  return errs
}

