/**
 * Structural defaulting: a property absent from an object (or null where the
 * schema does not allow null) takes the schema's default, recursively, inside
 * lists and additionalProperties. Nulls that are not allowed and have no
 * default are then dropped, as upstream does before storing.
 */
import { isPlainObject } from '../machinery/object.js'
import { StatusError, type StatusReason } from '../machinery/status-error.js'
import { additionalPropertiesSchema, itemsSchema, type JSONSchemaProps } from '../crd-schema/schema.js'
import { MAX_STORED_VALUE_BYTES } from '../storage/errors.js'

const isDisallowedNull = (value: unknown, s: JSONSchemaProps): boolean => value === null && !s.nullable

/** What the defaults put into one object so far, in bytes of JSON. */
interface Growth {
  bytes: number
}

/**
 * Applies the schema's defaults to `value` in place. Each default placed
 * is counted: a default of 500 kB on the items of a list of 20,000 empty
 * items (a 60 kB body) grew the object to 10 GB and ended the process.
 * Past what can be stored, defaulting stops with the answer storing it
 * would get (etcd's refusal, a 500 as upstream's store returns it).
 */
export function applySchemaDefaults(value: unknown, schema: JSONSchemaProps): void {
  applyDefaults(value, schema, { bytes: 0 })
  pruneDisallowedNulls(value, schema)
}

/** Each default's size in JSON, measured once per schema. */
const defaultSizes = new WeakMap<JSONSchemaProps, number>()

function sizeOfDefault(property: JSONSchemaProps): number {
  let size = defaultSizes.get(property)
  if (size === undefined) {
    size = JSON.stringify(property.default)?.length ?? 0
    defaultSizes.set(property, size)
  }
  return size
}

/** A copy of the default to place: a scalar as it is (strings are immutable and shared), a map or list cloned. */
function placedDefault(property: JSONSchemaProps, growth: Growth): unknown {
  growth.bytes += sizeOfDefault(property)
  if (growth.bytes > MAX_STORED_VALUE_BYTES) throw new StatusError(500, '' as StatusReason, 'etcdserver: request is too large')
  const value = property.default
  return value !== null && typeof value === 'object' ? structuredClone(value) : value
}

function applyDefaults(value: unknown, s: JSONSchemaProps, growth: Growth): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(s)
    if (items) for (const item of value) applyDefaults(item, items, growth)
    return
  }
  if (!isPlainObject(value)) return
  for (const [key, property] of Object.entries(s.properties ?? {})) {
    if (property.default === undefined) continue
    if (!(key in value) || isDisallowedNull(value[key], property)) value[key] = placedDefault(property, growth)
  }
  const additional = additionalPropertiesSchema(s)
  for (const [key, child] of Object.entries(value)) {
    const property = s.properties?.[key] ?? additional
    if (property) applyDefaults(child, property, growth)
  }
}

/** Drops fields (and map values) that are null although their schema neither allows null nor has a default. */
export function pruneDisallowedNulls(value: unknown, s: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(s)
    if (items) for (const item of value) pruneDisallowedNulls(item, items)
    return
  }
  if (!isPlainObject(value)) return
  const additional = additionalPropertiesSchema(s)
  for (const [key, child] of Object.entries(value)) {
    const property = s.properties?.[key] ?? additional
    if (!property) continue
    if (isDisallowedNull(child, property) && property.default === undefined) Reflect.deleteProperty(value, key)
    else pruneDisallowedNulls(child, property)
  }
}
