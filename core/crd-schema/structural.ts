/**
 * Is a CRD schema structural? Upstream (apiextensions-apiserver schema
 * package) requires every field to have a type outside of the logical
 * junctors (allOf/anyOf/oneOf/not), keeps the junctors to value validation
 * only, and restricts what may be said about metadata. Those are the rules
 * here, with upstream's messages; the rules every OpenAPI schema of a CRD
 * obeys besides (unsupported keywords, list and map types) live in
 * schema-rules.ts and are appended after them, as upstream reports them.
 */
import { regexError } from '../regex/re2.js'
import { errorText, forbiddenField, invalid, required, type FieldError, type FieldPath } from '../machinery/field.js'
import {
  additionalPropertiesSchema,
  isEmbeddedResource,
  isIntOrString,
  itemsSchema,
  preservesUnknownFields,
  type JSONSchemaProps,
} from './schema.js'
import { hasUnconvertibleKeywords, validateSchemaRules } from './schema-rules.js'
import { appendAll } from '../machinery/append-all.js'

type Level = 'root' | 'item' | 'field'

const EMPTY_TYPE_DETAIL: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
}

/**
 * All the problems of a CRD version's `openAPIV3Schema`, at paths under
 * `path` (the caller's `spec.versions[i].schema.openAPIV3Schema`).
 */
export function validateStructuralSchema(schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  const rules = validateSchemaRules(schema, path)
  // Upstream cannot build its structural form from a schema using keywords
  // it does not support; the rules above already name those keywords.
  if (hasUnconvertibleKeywords(schema)) return rules
  const structural = [...invariants(schema, 'root', path), ...completeness(schema, schema, path, path)]
  // Upstream sorts these by their text so that map iteration does not reorder them.
  structural.sort((a, b) => (errorText(a) < errorText(b) ? -1 : errorText(a) > errorText(b) ? 1 : 0))
  return [...structural, ...rules]
}

const sortedKeys = (record: Record<string, unknown> | undefined): string[] => Object.keys(record ?? {}).sort()

const isNonEmpty = (value: unknown): boolean =>
  Array.isArray(value) ? value.length > 0 : typeof value === 'string' ? value !== '' : value !== undefined && value !== null

// --- the structural invariants ---------------------------------------------------

function invariants(s: JSONSchemaProps, level: Level, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const items = itemsSchema(s)
  if (s.type === 'array' && !items) errs.push(required(path.child('items'), 'must be specified'))
  if (items) appendAll(errs, invariants(items, 'item', path.child('items')))
  for (const key of sortedKeys(s.properties)) {
    const property = s.properties?.[key]
    if (property) appendAll(errs, invariants(property, 'field', path.child('properties').key(key)))
  }
  if (s.additionalProperties !== undefined) {
    if (level === 'root') errs.push(forbiddenField(path.child('additionalProperties'), 'must not be used at the root'))
    const additional = additionalPropertiesSchema(s)
    if (additional) appendAll(errs, invariants(additional, 'field', path.child('additionalProperties')))
  }
  appendAll(errs, extensionConflicts(s, path))
  appendAll(errs, valueValidation(s, intOrStringAnyOf(s.anyOf), intOrStringAnyOf(s.allOf?.[0]?.anyOf), path))

  const embedded = isEmbeddedResource(s)
  const type = s.type ?? ''
  if (embedded && type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true'
    errs.push(type === '' ? required(path.child('type'), detail) : invalid(path.child('type'), type, detail))
  } else if (type === '' && !isIntOrString(s) && !preservesUnknownFields(s)) {
    errs.push(required(path.child('type'), EMPTY_TYPE_DETAIL[level]))
  }
  if (embedded && s.additionalProperties !== undefined) {
    errs.push(forbiddenField(path.child('additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'))
  }
  if (level === 'root' && type !== '' && type !== 'object') {
    errs.push(invalid(path.child('type'), type, 'must be object at the root'))
  }

  const checkMetadata = level === 'root' || embedded
  for (const typeField of ['kind', 'apiVersion']) {
    const property = s.properties?.[typeField]
    if (property && checkMetadata && property.type !== 'string') {
      errs.push(invalid(path.child('properties').key(typeField).child('type'), property.type ?? '', 'must be string'))
    }
  }
  const metadata = s.properties?.['metadata']
  if (metadata) appendAll(errs, metadataInvariants(metadata, checkMetadata, level, path.child('properties').key('metadata')))

  if (embedded && !preservesUnknownFields(s) && sortedKeys(s.properties).length === 0) {
    errs.push(
      required(
        path.child('properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    )
  }
  return errs
}

function extensionConflicts(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  if (!isIntOrString(s)) return []
  const errs: FieldError[] = []
  const detail = 'must be false if x-kubernetes-int-or-string is true'
  if (preservesUnknownFields(s)) errs.push(invalid(path.child('x-kubernetes-preserve-unknown-fields'), true, detail))
  if (isEmbeddedResource(s)) errs.push(invalid(path.child('x-kubernetes-embedded-resource'), true, detail))
  return errs
}

/** Only the object's own name and generateName may be restricted; anything else about metadata is implied. */
function metadataInvariants(m: JSONSchemaProps, checkMetadata: boolean, level: Level, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (checkMetadata && m.type !== 'object') errs.push(invalid(path.child('type'), m.type ?? '', 'must be object'))
  if (level !== 'root') return errs
  const propertyNames = sortedKeys(m.properties)
  const onlyNames = propertyNames.every((name) => name === 'name' || name === 'generateName')
  const saysMore = Object.entries(m).some(([key, value]) => {
    if (key === 'type' || key === 'default') return false
    if (key === 'properties') return !onlyNames
    return value !== false && isNonEmpty(value) && !(typeof value === 'object' && Object.keys(value).length === 0)
  })
  if (saysMore) {
    errs.push(
      forbiddenField(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'),
    )
  }
  return errs
}

/** `anyOf: [{type: integer}, {type: string}]` and nothing else: the int-or-string shape upstream allows. */
function intOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  if (anyOf?.length !== 2) return false
  const only = (s: JSONSchemaProps, type: string) => Object.keys(s).length === 1 && s.type === type
  return only(anyOf[0]!, 'integer') && only(anyOf[1]!, 'string')
}

function valueValidation(v: JSONSchemaProps, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (!skipAnyOf) v.anyOf?.forEach((n, i) => appendAll(errs, nested(n, false, path.child('anyOf').index(i))))
  v.allOf?.forEach((n, i) => appendAll(errs, nested(n, skipFirstAllOfAnyOf && i === 0, path.child('allOf').index(i))))
  v.oneOf?.forEach((n, i) => appendAll(errs, nested(n, false, path.child('oneOf').index(i))))
  if (v.not) appendAll(errs, nested(v.not, false, path.child('not')))
  if (v.pattern) {
    // RE2 syntax, as Go's regexp.Compile: lookaround and backreferences are refused here, not at match time.
    const reason = regexError(v.pattern)
    if (reason !== undefined) errs.push(invalid(path.child('pattern'), v.pattern, `must be a valid regular expression, but isn't: ${reason}`))
  }
  return errs
}

/** A schema under a logical junctor: value validation only, no structure, no extensions. */
function nested(v: JSONSchemaProps, skipAnyOf: boolean, path: FieldPath): FieldError[] {
  const errs = valueValidation(v, skipAnyOf, false, path)
  const items = itemsSchema(v)
  if (items) appendAll(errs, nested(items, false, path.child('items')))
  for (const key of sortedKeys(v.properties)) {
    const property = v.properties?.[key]
    if (property) appendAll(errs, nested(property, false, path.child('properties').key(key)))
  }
  const forbid = (name: string, detail: string) => errs.push(forbiddenField(path.child(name), detail))
  if (v.type) forbid('type', 'must be empty to be structural')
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural')
  if (v.default !== undefined && v.default !== null) forbid('default', 'must be undefined to be structural')
  if (v.title) forbid('title', 'must be empty to be structural')
  if (v.description) forbid('description', 'must be empty to be structural')
  if (v.nullable) forbid('nullable', 'must be false to be structural')
  if (v.externalDocs) forbid('externalDocs', 'must be undefined to be structural')
  if (preservesUnknownFields(v)) forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural')
  if (isEmbeddedResource(v)) forbid('x-kubernetes-embedded-resource', 'must be false to be structural')
  if (isIntOrString(v)) forbid('x-kubernetes-int-or-string', 'must be false to be structural')
  if (isNonEmpty(v['x-kubernetes-list-map-keys'])) forbid('x-kubernetes-list-map-keys', 'must be empty to be structural')
  if (v['x-kubernetes-list-type'] !== undefined) forbid('x-kubernetes-list-type', 'must be undefined to be structural')
  if (v['x-kubernetes-map-type'] !== undefined) forbid('x-kubernetes-map-type', 'must be undefined to be structural')
  if (isNonEmpty(v['x-kubernetes-validations'])) forbid('x-kubernetes-validations', 'must be empty to be structural')
  if (v.properties?.['metadata']) {
    errs.push(forbiddenField(path.child('properties').key('metadata'), 'must not be specified in a nested context'))
  }
  return errs
}

// --- completeness: what the junctors mention must exist in the structure ---------

function completeness(v: JSONSchemaProps, s: JSONSchemaProps, sPath: FieldPath, vPath: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (v.not) appendAll(errs, nestedCompleteness(v.not, s, sPath, vPath.child('not')))
  v.allOf?.forEach((n, i) => appendAll(errs, nestedCompleteness(n, s, sPath, vPath.child('allOf').index(i))))
  v.anyOf?.forEach((n, i) => appendAll(errs, nestedCompleteness(n, s, sPath, vPath.child('anyOf').index(i))))
  v.oneOf?.forEach((n, i) => appendAll(errs, nestedCompleteness(n, s, sPath, vPath.child('oneOf').index(i))))
  return errs
}

function nestedCompleteness(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: FieldPath,
  vPath: FieldPath,
): FieldError[] {
  if (!s) return [required(sPath, `because it is defined in ${String(vPath)}`)]
  const errs = completeness(v, s, sPath, vPath)
  const vItems = itemsSchema(v)
  if (vItems) appendAll(errs, nestedCompleteness(vItems, itemsSchema(s), sPath.child('items'), vPath.child('items')))
  for (const key of sortedKeys(v.properties)) {
    const vProperty = v.properties?.[key]
    if (!vProperty) continue
    const sProperty = s.properties?.[key]
    const sKeyPath = sPath.child('properties').key(key)
    const vKeyPath = vPath.child('properties').key(key)
    if (!sProperty) errs.push(required(sKeyPath, `because it is defined in ${String(vKeyPath)}`))
    else appendAll(errs, nestedCompleteness(vProperty, sProperty, sKeyPath, vKeyPath))
  }
  return errs
}
