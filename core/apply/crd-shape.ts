/**
 * The structure server-side apply sees in a custom resource, read from its
 * version's openAPIV3Schema the way upstream builds it for apply (the CRD's
 * OpenAPI model turned into a structured-merge-diff schema):
 *
 * - `properties` are named fields; `additionalProperties` types every other
 *   key; an object with neither, or under `x-kubernetes-preserve-unknown-fields`
 *   (which holds for the whole subtree), keeps other keys as deduced values
 *   (objects granular, everything else one leaf);
 * - lists are atomic unless `x-kubernetes-list-type` says `set` or `map`
 *   (keyed by `x-kubernetes-list-map-keys`, a missing key taking its default);
 * - `x-kubernetes-map-type: atomic` makes an object one leaf;
 * - the resource root and every `x-kubernetes-embedded-resource` object carry
 *   apiVersion, kind and a metadata that is the built-in ObjectMeta.
 */
import { DEDUCED, shapeOfType, type Json, type Shape } from './index.js'
import { additionalPropertiesSchema, isEmbeddedResource, itemsSchema, preservesUnknownFields, type JSONSchemaProps } from '../crd-schema/schema.js'
import { setKey } from '../machinery/object.js'

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'
const LEAF: Shape = { kind: 'leaf' }

const cache = new WeakMap<JSONSchemaProps, Shape>()

/** The shape of a custom resource whose version schema is `schema`; computed once per schema object. */
export function applyShapeOf(schema: JSONSchemaProps): Shape {
  let shape = cache.get(schema)
  if (!shape) {
    shape = objectShape(schema, preservesUnknownFields(schema), true)
    cache.set(schema, shape)
  }
  return shape
}

/** `preserving`: an ancestor (or the schema itself) keeps unknown fields. */
function shapeOf(schema: JSONSchemaProps, inherited: boolean): Shape {
  const preserving = inherited || preservesUnknownFields(schema)
  switch (schema.type ?? '') {
    case 'object':
      return objectShape(schema, preserving, isEmbeddedResource(schema))
    case 'array':
      return listShape(schema, preserving)
    case '':
      // No type: int-or-string, or a value preserve-unknown-fields leaves open.
      return DEDUCED
    default:
      return LEAF
  }
}

function objectShape(schema: JSONSchemaProps, preserving: boolean, resource: boolean): Shape {
  const fields = new Map<string, Shape>()
  for (const [name, property] of Object.entries(schema.properties ?? {})) fields.set(name, shapeOf(property, preserving))
  if (resource) {
    fields.set('apiVersion', LEAF)
    fields.set('kind', LEAF)
    fields.set('metadata', shapeOfType(OBJECT_META))
  }
  const rest = otherKeys(schema, preserving, fields.size === 0)
  const shape: Shape = fields.size === 0 && rest ? { kind: 'map', elem: rest } : { kind: 'fields', fields, ...(rest ? { rest } : {}) }
  return schema['x-kubernetes-map-type'] === 'atomic' ? { kind: 'leaf', object: shape } : shape
}

/** The shape of the keys `properties` does not name; undefined when they are not declared. */
function otherKeys(schema: JSONSchemaProps, preserving: boolean, noProperties: boolean): Shape | undefined {
  const additional = additionalPropertiesSchema(schema)
  if (additional) return shapeOf(additional, preserving)
  if (schema.additionalProperties === true) return DEDUCED
  if (schema.additionalProperties === false) return undefined
  // an object without properties is free-form
  return preserving || noProperties ? DEDUCED : undefined
}

function listShape(schema: JSONSchemaProps, preserving: boolean): Shape {
  const items = itemsSchema(schema)
  // a list without items holds untyped values, owned with the list
  const elem = items ? shapeOf(items, preserving) : LEAF
  switch (schema['x-kubernetes-list-type']) {
    case 'set':
      return { kind: 'list', listType: 'set', keys: [], elem }
    case 'map': {
      const keys = schema['x-kubernetes-list-map-keys'] ?? []
      const keyDefaults: Record<string, Json> = {}
      for (const key of keys) {
        const value = items?.properties?.[key]?.default
        if (value !== undefined) setKey(keyDefaults, key, value as Json)
      }
      return { kind: 'list', listType: 'map', keys, elem, ...(Object.keys(keyDefaults).length ? { keyDefaults } : {}) }
    }
    default:
      return { kind: 'leaf', items: elem }
  }
}
