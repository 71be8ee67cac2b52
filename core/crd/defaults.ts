/**
 * Structural defaulting: a property absent from an object (or null where the
 * schema does not allow null) takes the schema's default, recursively, inside
 * lists and additionalProperties. Nulls that are not allowed and have no
 * default are then dropped, as upstream does before storing.
 */
import { isPlainObject } from '../machinery/object.js'
import { additionalPropertiesSchema, itemsSchema, type JSONSchemaProps } from '../crd-schema/schema.js'

const isDisallowedNull = (value: unknown, s: JSONSchemaProps): boolean => value === null && !s.nullable

/** Applies the schema's defaults to `value` in place. */
export function applySchemaDefaults(value: unknown, schema: JSONSchemaProps): void {
  applyDefaults(value, schema)
  pruneDisallowedNulls(value, schema)
}

function applyDefaults(value: unknown, s: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(s)
    if (items) for (const item of value) applyDefaults(item, items)
    return
  }
  if (!isPlainObject(value)) return
  for (const [key, property] of Object.entries(s.properties ?? {})) {
    if (property.default === undefined) continue
    if (!(key in value) || isDisallowedNull(value[key], property)) value[key] = structuredClone(property.default)
  }
  const additional = additionalPropertiesSchema(s)
  for (const [key, child] of Object.entries(value)) {
    const property = s.properties?.[key] ?? additional
    if (property) applyDefaults(child, property)
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
