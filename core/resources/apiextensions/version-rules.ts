/**
 * The rules of what a CRD version carries (upstream's
 * validateCustomResourceDefinitionVersion and the validators it calls): the
 * schema (structural, CEL rules that compile, the root restricted when the
 * status subresource is on), the scale subresource's JSON paths, the printer
 * columns and the selectable fields. Each takes the path it reports under,
 * which is the version's own or spec level (see layout.ts).
 */
import { type CelSchemaProps, compileRules } from '../../crd-schema/cel-rules.js'
import type { JSONSchemaProps } from '../../crd-schema/schema.js'
import { validateStructuralSchema } from '../../crd-schema/structural.js'
import { duplicate, type FieldError, type FieldPath, invalid, required, tooMany } from '../../machinery/field.js'
import { isPlainObject } from '../../machinery/object.js'
import { goSchemaProps } from './go-values.js'
import { appendAll } from '../../machinery/append-all.js'

const record = (value: unknown): Record<string, unknown> => (isPlainObject(value) ? value : {})
const text = (value: unknown): string => (typeof value === 'string' ? value : '')

// --- the schema ------------------------------------------------------------------

/** Upstream's JSONSchemaProps fields in struct order, with the JSON name of each. */
const SCHEMA_FIELDS: readonly (readonly [goName: string, jsonName: string])[] = [
  ['ID', 'id'],
  ['Schema', '$schema'],
  ['Ref', '$ref'],
  ['Description', 'description'],
  ['Type', 'type'],
  ['Format', 'format'],
  ['Title', 'title'],
  ['Default', 'default'],
  ['Maximum', 'maximum'],
  ['ExclusiveMaximum', 'exclusiveMaximum'],
  ['Minimum', 'minimum'],
  ['ExclusiveMinimum', 'exclusiveMinimum'],
  ['MaxLength', 'maxLength'],
  ['MinLength', 'minLength'],
  ['Pattern', 'pattern'],
  ['MaxItems', 'maxItems'],
  ['MinItems', 'minItems'],
  ['UniqueItems', 'uniqueItems'],
  ['MultipleOf', 'multipleOf'],
  ['Enum', 'enum'],
  ['MaxProperties', 'maxProperties'],
  ['MinProperties', 'minProperties'],
  ['Required', 'required'],
  ['Items', 'items'],
  ['AllOf', 'allOf'],
  ['OneOf', 'oneOf'],
  ['AnyOf', 'anyOf'],
  ['Not', 'not'],
  ['Properties', 'properties'],
  ['AdditionalProperties', 'additionalProperties'],
  ['PatternProperties', 'patternProperties'],
  ['Dependencies', 'dependencies'],
  ['AdditionalItems', 'additionalItems'],
  ['Definitions', 'definitions'],
  ['ExternalDocs', 'externalDocs'],
  ['Example', 'example'],
  ['Nullable', 'nullable'],
  ['XPreserveUnknownFields', 'x-kubernetes-preserve-unknown-fields'],
  ['XEmbeddedResource', 'x-kubernetes-embedded-resource'],
  ['XIntOrString', 'x-kubernetes-int-or-string'],
  ['XListMapKeys', 'x-kubernetes-list-map-keys'],
  ['XListType', 'x-kubernetes-list-type'],
  ['XMapType', 'x-kubernetes-map-type'],
  ['XValidations', 'x-kubernetes-validations'],
]

/** What may be said at the root when the status lives in its own subresource, so that `properties.status` says all about it. */
const ALLOWED_AT_STATUS_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
]

/** Go's zero value of a decoded field: a set pointer, slice or map is not zero, even when empty. */
const isZero = (value: unknown): boolean => value === undefined || value === null || value === false || value === '' || value === 0

/** The first field at the root that the status subresource forbids, in upstream's struct order. */
function statusRootErrors(schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  const fields = schema as Record<string, unknown>
  for (const [goName, jsonName] of SCHEMA_FIELDS) {
    const value = fields[jsonName]
    if (isZero(value)) continue
    if (goName === 'Type') {
      if (value === 'object') continue
      const detail = 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'
      return [invalid(path.child('openAPIV3Schema.type'), value, detail)]
    }
    if (!ALLOWED_AT_STATUS_ROOT.includes(goName)) {
      const detail = `only [${ALLOWED_AT_STATUS_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`
      return [invalid(path.child('openAPIV3Schema'), goSchemaProps, detail)]
    }
  }
  return []
}

/**
 * A `schema` (`{openAPIV3Schema}`) at `path`: the status root rule, then the
 * structural rules; the CEL rules are compiled, and their estimated costs
 * checked, only for a schema without other problems, as upstream cannot
 * type them otherwise. `unchangedSchema`: an update leaves this schema as
 * it was, so its rules are not held to the per-rule cost limit again.
 */
export function validateSchemaHolder(holder: unknown, statusEnabled: boolean, path: FieldPath, unchangedSchema = false): FieldError[] {
  const schema = record(holder)['openAPIV3Schema']
  if (!isPlainObject(schema)) return []
  const props = schema as JSONSchemaProps
  const errs = statusEnabled ? statusRootErrors(props, path) : []
  const structural = validateStructuralSchema(props, path.child('openAPIV3Schema'))
  appendAll(errs, structural)
  // A structural schema has single-schema `items`, the form the CEL rules are typed from.
  if (structural.length === 0) {
    appendAll(errs, compileRules(props as CelSchemaProps, path.child('openAPIV3Schema'), { resourceRoot: true, unchangedSchema }).errors)
  }
  return errs
}

// --- subresources and columns ------------------------------------------------------

/** Upstream's validateSimpleJSONPath: a path in dot notation starting with a dot. */
function simpleJsonPathErrors(value: string, path: FieldPath): FieldError[] {
  if (value === '') return [invalid(path, value, 'must not be empty')]
  if (!value.startsWith('.')) return [invalid(path, value, 'must be a simple json path starting with .')]
  return []
}

function scalePathErrors(value: unknown, path: FieldPath, prefixes: readonly string[], detail: string): FieldError[] {
  const errs = simpleJsonPathErrors(text(value), path)
  if (errs.length) return errs
  return prefixes.some((p) => text(value).startsWith(p)) ? [] : [invalid(path, value, detail)]
}

export function validateSubresources(subresources: unknown, path: FieldPath): FieldError[] {
  const scale = record(subresources)['scale']
  if (!isPlainObject(scale)) return []
  const errs: FieldError[] = []
  const spec = path.child('scale.specReplicasPath')
  if (!text(scale['specReplicasPath'])) errs.push(required(spec))
  else appendAll(errs, scalePathErrors(scale['specReplicasPath'], spec, ['.spec.'], 'should be a json path under .spec'))
  const status = path.child('scale.statusReplicasPath')
  if (!text(scale['statusReplicasPath'])) errs.push(required(status))
  else appendAll(errs, scalePathErrors(scale['statusReplicasPath'], status, ['.status.'], 'should be a json path under .status'))
  if (text(scale['labelSelectorPath'])) {
    const selector = path.child('scale.labelSelectorPath')
    appendAll(errs, scalePathErrors(scale['labelSelectorPath'], selector, ['.spec.', '.status.'], 'should be a json path under either .spec or .status'))
  }
  return errs
}

/** Sorted, as upstream lists its sets. */
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string']
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password']

export function validateColumn(column: unknown, path: FieldPath): FieldError[] {
  const c = record(column)
  const errs: FieldError[] = []
  if (!text(c['name'])) errs.push(required(path.child('name')))
  const type = text(c['type'])
  const typeDetail = `must be one of ${COLUMN_TYPES.join(',')}`
  if (!type) errs.push(required(path.child('type'), typeDetail))
  else if (!COLUMN_TYPES.includes(type)) errs.push(invalid(path.child('type'), type, typeDetail))
  const format = text(c['format'])
  if (format && !COLUMN_FORMATS.includes(format)) errs.push(invalid(path.child('format'), format, `must be one of ${COLUMN_FORMATS.join(',')}`))
  // Upstream names the field by its Go name here.
  const jsonPath = text(c['jsonPath'])
  if (!jsonPath) errs.push(required(path.child('JSONPath')))
  else appendAll(errs, simpleJsonPathErrors(jsonPath, path.child('JSONPath')))
  return errs
}

export function validateColumns(columns: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(columns)) return []
  return columns.flatMap((c, i) => validateColumn(c, path.index(i)))
}

// --- selectable fields -------------------------------------------------------------

export const MAX_SELECTABLE_FIELDS = 8

/**
 * Follows a selectable field's path (`.spec.color`: dot steps only, no
 * array notation) through the schema; the schema it reaches and the path's
 * normalized text, or why it is not a valid path (upstream's ValidFieldPath).
 */
function resolveSelectablePath(jsonPath: string, schema: JSONSchemaProps): { schema: JSONSchemaProps; path: string[] } | string {
  let node: JSONSchemaProps = schema
  const path: string[] = []
  let rest = jsonPath
  while (rest) {
    const c = rest[0]
    if (c === '[') return 'array notation is not allowed'
    if (c !== '.') return `expected [ or . but got: ${/^[^.[\]]*/.exec(rest)?.[0] || c}`
    rest = rest.slice(1)
    if (!rest) return 'unexpected end of JSON path'
    const name = /^[^.[\]]*/.exec(rest)?.[0] ?? ''
    const step = name || (rest[0] ?? '')
    rest = rest.slice(step.length)
    if (node.properties) {
      const next = node.properties[step]
      if (!next) return 'does not refer to a valid field'
      node = next
    } else if (isPlainObject(node.additionalProperties)) {
      node = node.additionalProperties
    } else {
      return 'does not refer to a valid field'
    }
    path.push(step)
  }
  return { schema: node, path }
}

export function validateSelectableFields(fields: unknown, schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  if (!Array.isArray(fields)) return []
  const errs: FieldError[] = []
  const seen = new Set<string>()
  fields.forEach((f, i) => {
    const at = path.index(i).child('jsonPath')
    const jsonPath = text(record(f)['jsonPath'])
    if (!jsonPath) {
      errs.push(required(at))
      return
    }
    const found = resolveSelectablePath(jsonPath, schema)
    if (typeof found === 'string') {
      errs.push(invalid(at, jsonPath, `is an invalid path: ${found}`))
      return
    }
    if (found.path[0] === 'metadata') errs.push(invalid(at, jsonPath, 'must not point to fields in metadata'))
    if (!['string', 'boolean', 'integer'].includes(found.schema.type ?? '')) {
      const detail = 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'
      errs.push(invalid(at, jsonPath, detail))
    }
    const key = found.path.join('.')
    if (seen.has(key)) errs.push(duplicate(at, jsonPath))
    else seen.add(key)
  })
  if (seen.size > MAX_SELECTABLE_FIELDS) errs.push(tooMany(path, seen.size, MAX_SELECTABLE_FIELDS))
  return errs
}

// --- deprecation -------------------------------------------------------------------

/** Upstream's validateDeprecationWarning. */
export function deprecationWarningProblems(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions']
  if (warning === undefined) return []
  const problems: string[] = []
  if (new TextEncoder().encode(warning).length > 256) problems.push('must be <= 256 characters long')
  if (warning.length === 0) problems.push('must not be an empty string')
  let index = 0
  for (const ch of warning) {
    // Control characters are not printable either, so upstream's separate message for them never shows.
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      problems.push(`must only contain printable UTF-8 characters; non-printable character found at index ${index}`)
      break
    }
    index += new TextEncoder().encode(ch).length
  }
  return problems
}
