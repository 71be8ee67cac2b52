/**
 * Pruning: fields a schema does not specify are dropped from a custom
 * resource before it is stored, unless `x-kubernetes-preserve-unknown-fields`
 * keeps them. apiVersion, kind and metadata of the resource, and of every
 * embedded resource, are never pruned here (metadata has rules of its own).
 * The dropped paths are returned so that field validation can report them as
 * unknown fields.
 */
import { isPlainObject } from '../machinery/object.js'
import {
  additionalPropertiesSchema,
  isEmbeddedResource,
  itemsSchema,
  preservesUnknownFields,
  RESOURCE_META_FIELDS,
  type JSONSchemaProps,
} from '../crd-schema/schema.js'

/** Drops, in place, what `schema` does not specify; answers the dropped paths (`spec.foo`, `spec.ports[0].x`). */
export function prune(value: unknown, schema: JSONSchemaProps): string[] {
  const pruned: string[] = []
  pruneValue(value, schema, true, '', pruned)
  return pruned
}

const join = (parent: string, key: string): string => (parent ? `${parent}.${key}` : key)

function pruneValue(value: unknown, s: JSONSchemaProps | undefined, isResourceRoot: boolean, path: string, pruned: string[]): void {
  if (Array.isArray(value)) {
    const items = s ? itemsSchema(s) : undefined
    value.forEach((item, i) => pruneValue(item, items, false, `${path}[${i}]`, pruned))
    return
  }
  if (!isPlainObject(value)) return
  // No schema here means an ancestor preserves unknown fields: keep everything below.
  if (!s) return
  const additional = additionalPropertiesSchema(s)
  const keepUnknown = preservesUnknownFields(s) || s.additionalProperties === true
  for (const key of Object.keys(value)) {
    if (isResourceRoot && RESOURCE_META_FIELDS.has(key)) continue
    const property = s.properties?.[key] ?? additional
    if (property) {
      pruneValue(value[key], property, isEmbeddedResource(property), join(path, key), pruned)
    } else if (!keepUnknown) {
      Reflect.deleteProperty(value, key)
      pruned.push(join(path, key))
    }
  }
}
