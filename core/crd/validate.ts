/**
 * A custom resource checked against its version's schema, with the causes
 * upstream's schema validator (kube-openapi) gives, turned into field errors
 * the way the apiextensions server turns them: `spec.replicas: Invalid value:
 * "string": spec.replicas in body must be of type integer: "string"`. Then,
 * as upstream does after it, the `set` and `map` lists are checked for
 * duplicates.
 */
import { RegexWorkBudget, RegexWorkExceeded, regexError, userRegexTestInSteps } from '../regex/re2.js'
import { appendAll, appendAllInSteps } from '../machinery/append-all.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'
import { GoLiteral, goPrint } from '../machinery/go-format.js'
import {
  duplicate,
  invalid,
  notSupportedWith,
  supportedValues,
  required,
  tooLong,
  tooMany,
  typeInvalid,
  type FieldError,
  type FieldPath,
} from '../machinery/field.js'
import { isPlainObject } from '../machinery/object.js'
import { matchesFormat } from '../validation/formats.js'
import { additionalPropertiesSchema, isIntOrString, itemsSchema, type JSONSchemaProps } from '../crd-schema/schema.js'

/** The object's schema errors, found without letting anything else run. */
export function validateObject(value: unknown, schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  return runAtOnce(validateObjectInSteps(value, schema, path))
}

/**
 * The same, as work with checkpoints (one every so many values checked): a
 * large object against a schema of many junctors (an `allOf` of a thousand
 * entries over ten thousand items checks ten million values) is run in
 * slices, other requests served between them.
 */
export function* validateObjectInSteps(value: unknown, schema: JSONSchemaProps, path: FieldPath): Checkpointed<FieldError[]> {
  // The patterns of one object share one bound on their work (regex/re2.ts).
  const errs = yield* validateValue(value, schema, path, new RegexWorkBudget())
  yield* appendAllInSteps(errs, yield* validateListSetsAndMaps(value, schema, path))
  return errs
}

/** Values checked between checkpoints. */
const VALUES_PER_CHECKPOINT = 512
let valuesChecked = 0

/** A checkpoint every VALUES_PER_CHECKPOINT values, whichever walk checks them. */
function* countValue(): Checkpointed<void> {
  if (++valuesChecked % VALUES_PER_CHECKPOINT === 0) yield
}

/** The JSON type name of a decoded value, as the validator reports it. */
function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  if (isPlainObject(value)) return 'object'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function hasType(value: unknown, type: string): boolean {
  const actual = jsonType(value)
  return actual === type || (type === 'number' && actual === 'integer')
}

/** The name the messages use for a value: its path from the object root. */
const nameOf = (path: FieldPath): string => String(path) || '.'

function* validateValue(value: unknown, s: JSONSchemaProps, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError[]> {
  yield* countValue()
  const name = nameOf(path)
  if ((value === null || value === undefined) && s.nullable) return []
  const types = isIntOrString(s) ? ['integer', 'string'] : s.type ? [s.type] : []
  if (types.length > 0 && !types.some((t) => hasType(value, t))) {
    const actual = jsonType(value)
    return [typeInvalid(path, actual, `${name} in body must be of type ${types.join(',')}: "${actual}"`)]
  }
  const errs = yield* junctors(value, s, path, budget)
  appendAll(errs, yield* stringRules(value, s, path, budget))
  appendAll(errs, numberRules(value, s, path))
  yield* appendAllInSteps(errs, yield* arrayRules(value, s, path, budget))
  appendAll(errs, enumRule(value, s, path))
  yield* appendAllInSteps(errs, yield* objectRules(value, s, path, budget))
  return errs
}

/** How many of `schemas` the value validates against, stopping once `enough` do. */
function* validCount(value: unknown, schemas: readonly JSONSchemaProps[], path: FieldPath, enough: number, budget: RegexWorkBudget): Checkpointed<number> {
  let valid = 0
  for (const sub of schemas) {
    if ((yield* validateValue(value, sub, path, budget)).length === 0) valid++
    if (valid >= enough) break
  }
  return valid
}

function* junctors(value: unknown, s: JSONSchemaProps, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError[]> {
  const name = nameOf(path)
  const errs: FieldError[] = []
  for (const sub of s.allOf ?? []) yield* appendAllInSteps(errs, yield* validateValue(value, sub, path, budget))
  if (s.anyOf && s.anyOf.length > 0 && (yield* validCount(value, s.anyOf, path, 1, budget)) === 0) {
    errs.push(invalid(path, '', `${name} in body must validate at least one schema (anyOf)`))
  }
  if (s.oneOf && s.oneOf.length > 0 && (yield* validCount(value, s.oneOf, path, Infinity, budget)) !== 1) {
    errs.push(invalid(path, '', `${name} in body must validate one and only one schema (oneOf)`))
  }
  if (s.not && (yield* validateValue(value, s.not, path, budget)).length === 0) {
    errs.push(invalid(path, '', `${name} in body must not validate the schema (not)`))
  }
  return errs
}

function* stringRules(value: unknown, s: JSONSchemaProps, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError[]> {
  if (typeof value !== 'string') return []
  const name = nameOf(path)
  const errs: FieldError[] = []
  // Lengths count characters (code points), not UTF-16 units or bytes.
  const length = [...value].length
  if (s.maxLength !== undefined && length > s.maxLength) errs.push(tooLong(path, s.maxLength))
  if (s.minLength !== undefined && length < s.minLength) {
    errs.push(invalid(path, value, `${name} in body should be at least ${s.minLength} chars long`))
  }
  const patternErr = s.pattern === undefined ? undefined : yield* patternError(s.pattern, value, path, budget)
  if (patternErr) errs.push(patternErr)
  if (s.format && !matchesFormat(s.format, value)) {
    errs.push(typeInvalid(path, value, `${name} in body must be of type ${s.format}: ${JSON.stringify(value)}`))
  }
  return errs
}

/**
 * `value` against `pattern`: no error when it matches; when the match
 * would cost more than the server lets one match cost, or than is left of
 * what the object's matches may cost together (regex/re2.ts), the value is
 * refused as invalid too, since it could not be shown to match. The match
 * runs with checkpoints: one over a long value takes a while.
 */
function* patternError(pattern: string, value: string, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError | undefined> {
  const name = nameOf(path)
  try {
    if (yield* matchesPattern(pattern, value, budget)) return undefined
  } catch (err) {
    if (!(err instanceof RegexWorkExceeded)) throw err
    return invalid(path, value, `${name} in body could not be matched against '${pattern}': ${err.message}`)
  }
  return invalid(path, value, `${name} in body should match '${pattern}'`)
}

/** Whether `value` matches `pattern` (unanchored, RE2); a pattern RE2 refuses matches nothing, as it cannot pass CRD validation. */
function* matchesPattern(pattern: string, value: string, budget: RegexWorkBudget): Checkpointed<boolean> {
  return regexError(pattern) === undefined && (yield* userRegexTestInSteps(pattern, value, budget))
}

function numberRules(value: unknown, s: JSONSchemaProps, path: FieldPath): FieldError[] {
  if (typeof value !== 'number') return []
  const name = nameOf(path)
  const errs: FieldError[] = []
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const quotient = value / s.multipleOf
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) {
      errs.push(invalid(path, value, `${name} in body should be a multiple of ${goPrint(s.multipleOf)}`))
    }
  }
  if (s.maximum !== undefined) {
    if (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum) {
      const bound = s.exclusiveMaximum ? 'less than' : 'less than or equal to'
      errs.push(invalid(path, value, `${name} in body should be ${bound} ${goPrint(s.maximum)}`))
    }
  }
  if (s.minimum !== undefined) {
    if (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum) {
      const bound = s.exclusiveMinimum ? 'greater than' : 'greater than or equal to'
      errs.push(invalid(path, value, `${name} in body should be ${bound} ${goPrint(s.minimum)}`))
    }
  }
  return errs
}

function* arrayRules(value: unknown, s: JSONSchemaProps, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError[]> {
  if (!Array.isArray(value)) return []
  const name = nameOf(path)
  const errs: FieldError[] = []
  if (s.minItems !== undefined && value.length < s.minItems) {
    errs.push(invalid(path, value.length, `${name} in body should have at least ${s.minItems} items`))
  }
  if (s.maxItems !== undefined && value.length > s.maxItems) errs.push(tooMany(path, value.length, s.maxItems))
  if (s.uniqueItems && new Set(value.map(canonicalJSON)).size !== value.length) {
    errs.push(invalid(path, '', `${name} in body shouldn't contain duplicates`))
  }
  const items = itemsSchema(s)
  if (items) for (let i = 0; i < value.length; i++) yield* appendAllInSteps(errs, yield* validateValue(value[i], items, path.index(i), budget))
  return errs
}

/** An enum's values as canonical JSON texts, and its failure's detail naming them all: made once per schema. */
interface EnumValues {
  allowed: ReadonlySet<string>
  detail: string
}

const enumValues = new WeakMap<JSONSchemaProps, EnumValues>()

function enumValuesOf(s: JSONSchemaProps, values: readonly unknown[]): EnumValues {
  let known = enumValues.get(s)
  if (!known) {
    known = {
      allowed: new Set(values.map(canonicalJSON)),
      detail: supportedValues(values.map((allowed) => (typeof allowed === 'string' ? allowed : JSON.stringify(allowed)))),
    }
    enumValues.set(s, known)
  }
  return known
}

function enumRule(value: unknown, s: JSONSchemaProps, path: FieldPath): FieldError[] {
  if (!s.enum || s.enum.length === 0) return []
  // Looked up, not compared value by value: an enum of 20,000 values on a list of 5,000 items took 45 s.
  const { allowed, detail } = enumValuesOf(s, s.enum)
  if (allowed.has(canonicalJSON(value))) return []
  return [notSupportedWith(path, value, detail)]
}

function* objectRules(value: unknown, s: JSONSchemaProps, path: FieldPath, budget: RegexWorkBudget): Checkpointed<FieldError[]> {
  if (!isPlainObject(value)) return []
  const name = nameOf(path)
  const errs: FieldError[] = []
  const keys = Object.keys(value)
  if (s.maxProperties !== undefined && keys.length > s.maxProperties) errs.push(tooMany(path, keys.length, s.maxProperties))
  if (s.minProperties !== undefined && keys.length < s.minProperties) {
    errs.push(invalid(path, keys.length, `${name} in body should have at least ${s.minProperties} properties`))
  }
  if (s.additionalProperties === false) {
    for (const key of keys.filter((k) => !s.properties?.[k]).sort()) {
      errs.push(invalid(path, key, `${name}.${key} in body is a forbidden property`))
    }
  }
  // A field sent as null is present: only its type is then checked.
  for (const field of s.required ?? []) if (!(field in value)) errs.push(required(path.child(field)))
  const additional = additionalPropertiesSchema(s)
  for (const key of keys.sort()) {
    const property = s.properties?.[key] ?? additional
    if (property) yield* appendAllInSteps(errs, yield* validateValue(value[key], property, path.child(key), budget))
  }
  return errs
}

// --- x-kubernetes-list-type: set and map -----------------------------------------

function* validateListSetsAndMaps(value: unknown, s: JSONSchemaProps, path: FieldPath): Checkpointed<FieldError[]> {
  yield* countValue()
  const errs: FieldError[] = []
  if (Array.isArray(value)) {
    const items = itemsSchema(s)
    const listType = s['x-kubernetes-list-type']
    // Each item written as canonical JSON to be compared: a set of 200,000 held the thread a tenth of a second at once.
    if (listType === 'set') yield* appendAllInSteps(errs, yield* setDuplicates(value, path))
    if (listType === 'map') yield* appendAllInSteps(errs, yield* mapDuplicates(value, s['x-kubernetes-list-map-keys'] ?? [], items, path))
    if (items) for (let i = 0; i < value.length; i++) yield* appendAllInSteps(errs, yield* validateListSetsAndMaps(value[i], items, path.index(i)))
  } else if (isPlainObject(value)) {
    const additional = additionalPropertiesSchema(s)
    for (const key of Object.keys(value).sort()) {
      const property = s.properties?.[key] ?? additional
      if (property) yield* appendAllInSteps(errs, yield* validateListSetsAndMaps(value[key], property, path.child(key)))
    }
  }
  return errs
}

function* setDuplicates(list: unknown[], path: FieldPath): Checkpointed<FieldError[]> {
  const seen = new Set<string>()
  const errs: FieldError[] = []
  for (let i = 0; i < list.length; i++) {
    yield* countValue()
    const item = list[i]
    const key = canonicalJSON(item)
    if (seen.has(key)) errs.push(duplicate(path.index(i), goValue(item)))
    seen.add(key)
  }
  return errs
}

function* mapDuplicates(list: unknown[], keys: readonly string[], items: JSONSchemaProps | undefined, path: FieldPath): Checkpointed<FieldError[]> {
  const seen = new Set<string>()
  const errs: FieldError[] = []
  for (let i = 0; i < list.length; i++) {
    yield* countValue()
    const item = list[i]
    if (!isPlainObject(item)) continue
    // A key left out counts as its default, as upstream compares them.
    const keyValues: Record<string, unknown> = {}
    for (const k of keys) {
      const v = k in item ? item[k] : items?.properties?.[k]?.default
      if (v !== undefined) keyValues[k] = v
    }
    const id = canonicalJSON(keyValues)
    if (seen.has(id)) errs.push(duplicate(path.index(i), goValue(keyValues)))
    seen.add(id)
  }
  return errs
}

/** JSON with object keys sorted: equal values give equal texts. */
function canonicalJSON(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON(value[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** Go's `%#v` of a decoded JSON value, as a Duplicate cause shows it. */
function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean') return goPrint(value)
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`
  if (isPlainObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goSyntax(value[k])}`)
    return `map[string]interface {}{${entries.join(', ')}}`
  }
  return String(value)
}

/** Scalars print as field errors print them; lists and maps in Go syntax. */
const goValue = (value: unknown): unknown =>
  Array.isArray(value) || isPlainObject(value) ? new GoLiteral(goSyntax(value)) : value
