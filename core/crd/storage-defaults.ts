/**
 * Custom resources read from storage take the defaults of their CRD's
 * current schema, as upstream's storage codec defaults what it decodes
 * (apiextensions' unstructuredDefaulter): an object stored before a default
 * was added shows it on every get, list and watch, and a write that starts
 * from such a read stores it. Defaults come from the schema of the version
 * the object is stored in, before it is converted to the served one, as
 * upstream defaults while decoding from etcd.
 *
 * The defaulting wraps the version conversion of each served version, so it
 * follows the CRD: a changed CRD gives new catalogue entries, hence new
 * conversions, while the watch cache underneath keeps the stored objects as
 * they are. Built-in resources never pass here. An object that already
 * holds every default is handed on as it is (no copy: the watch cache's
 * frozen object and its kept encodings stay in use).
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { CustomResourceDefinition } from '../resources/apiextensions/types.js'
import type { VersionConversion } from '../resources/catalogue.js'
import { applySchemaDefaults } from './defaults.js'
import { additionalPropertiesSchema, itemsSchema, type JSONSchemaProps } from '../crd-schema/schema.js'

/** Whether a schema holds a default anywhere: without one, reads are left alone. */
function hasDefaults(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false
  if (s.default !== undefined) return true
  if (Object.values(s.properties ?? {}).some(hasDefaults)) return true
  return hasDefaults(itemsSchema(s)) || hasDefaults(additionalPropertiesSchema(s))
}

/** Whether defaulting would change `value`: a defaulted property absent (or a null it replaces or drops). */
function wantsDefaults(value: unknown, s: JSONSchemaProps): boolean {
  if (Array.isArray(value)) {
    const items = itemsSchema(s)
    return items !== undefined && value.some((item) => wantsDefaults(item, items))
  }
  if (!isPlainObject(value)) return false
  for (const [key, property] of Object.entries(s.properties ?? {})) {
    if (property.default !== undefined && (!(key in value) || (value[key] === null && !property.nullable))) return true
  }
  const additional = additionalPropertiesSchema(s)
  for (const [key, child] of Object.entries(value)) {
    const property = s.properties?.[key] ?? additional
    if (!property) continue
    if (child === null && !property.nullable) return true
    if (wantsDefaults(child, property)) return true
  }
  return false
}

/** The stored object with its version's defaults: itself when it lacks none, else a defaulted copy. */
function defaulter(crd: CustomResourceDefinition): ((stored: KubeObject) => KubeObject) | undefined {
  const schemas = new Map<string, JSONSchemaProps>()
  for (const version of crd.spec.versions) {
    const schema = version.schema?.openAPIV3Schema
    if (hasDefaults(schema)) schemas.set(`${crd.spec.group}/${version.name}`, schema!)
  }
  if (schemas.size === 0) return undefined
  return (stored) => {
    const schema = typeof stored.apiVersion === 'string' ? schemas.get(stored.apiVersion) : undefined
    if (!schema || !wantsDefaults(stored, schema)) return stored
    const copy = structuredClone(stored)
    applySchemaDefaults(copy, schema)
    return copy
  }
}

/** `conversion` reading every stored object defaulted first; unchanged for a CRD without defaults. */
export function defaultingFromStorage(crd: CustomResourceDefinition, conversion: VersionConversion): VersionConversion {
  const withDefaults = defaulter(crd)
  if (!withDefaults) return conversion
  const { forSelection, fromStorageAll } = conversion
  return {
    storageVersion: conversion.storageVersion,
    toStorage: (obj) => conversion.toStorage(obj),
    fromStorage: (stored) => conversion.fromStorage(withDefaults(stored)),
    ...(forSelection ? { forSelection: (stored: KubeObject) => forSelection(withDefaults(stored)) } : {}),
    ...(fromStorageAll ? { fromStorageAll: (stored: readonly KubeObject[]) => fromStorageAll(stored.map(withDefaults)) } : {}),
  }
}
