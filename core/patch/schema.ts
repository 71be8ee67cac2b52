/**
 * The patch metadata of a field (strategy, merge key, value type), read from
 * the generated type tables in place of upstream's struct tags.
 */
import type { TypeRef, TypeTable } from '../resources/schema/model.js'
import { cannotApply } from './errors.js'

export interface FieldPatchMeta {
  /** The field's value type; undefined when the table does not know it (then plain JSON rules apply). */
  type: TypeRef | undefined
  /** `merge`, `replace` or '' (the field has no strategy: maps merge, lists replace). */
  strategy: string
  mergeKey: string
}

const RAW: FieldPatchMeta = { type: undefined, strategy: '', mergeKey: '' }

/**
 * True for values merged as plain JSON (RFC 7386): raw fields, fields the
 * table does not know, and types with several JSON forms (JSONSchemaPropsOrBool ...),
 * which have no fields to carry patch strategies.
 */
export function isRaw(type: TypeRef | undefined, types: TypeTable): boolean {
  if (type === undefined || 'scalar' in type) return true
  if (!('ref' in type)) return false
  const def = types[type.ref]
  return def === undefined || def.jsonForms !== undefined
}

/**
 * `merge,retainKeys` -> `merge`: retainKeys only tells clients to send the
 * `$retainKeys` directive, which is honoured wherever it appears.
 */
function otherStrategy(patchStrategy: string | undefined): string {
  if (!patchStrategy) return ''
  const parts = patchStrategy.split(',')
  if (parts.length === 1) return parts[0] === 'retainKeys' ? '' : (parts[0] ?? '')
  if (parts.length === 2 && parts[0] === 'retainKeys') return parts[1] ?? ''
  if (parts.length === 2 && parts[1] === 'retainKeys') return parts[0] ?? ''
  throw cannotApply(`unexpected patch strategy: [${parts.join(' ')}]`)
}

/**
 * The metadata of `key` inside a value of type `parent`: a struct's field, or
 * the value type of a map. Fields the table does not know are raw, so they
 * merge as plain JSON rather than failing as upstream's struct lookup would.
 */
export function lookupField(parent: TypeRef | undefined, key: string, types: TypeTable): FieldPatchMeta {
  if (parent === undefined) return RAW
  if ('map' in parent) return { type: parent.map, strategy: '', mergeKey: '' }
  if (!('ref' in parent)) return RAW
  const def = types[parent.ref]
  if (!def) return RAW
  // Go's decoder matches field names case-insensitively when no exact match exists.
  const field =
    def.fields.find((f) => f.name === key) ?? def.fields.find((f) => f.name.toLowerCase() === key.toLowerCase())
  if (!field) return RAW
  return { type: field.type, strategy: otherStrategy(field.patchStrategy), mergeKey: field.patchMergeKey ?? '' }
}

/** Like lookupField, but for a list field: the type is that of the list's items. */
export function lookupListField(parent: TypeRef | undefined, key: string, types: TypeTable): FieldPatchMeta {
  const meta = lookupField(parent, key, types)
  if (meta.type && 'array' in meta.type) {
    if ('array' in meta.type.array) throw cannotApply('unexpected slice of slice')
    return { ...meta, type: meta.type.array }
  }
  return meta
}

/** `io.k8s.api.core.v1.Container` -> `Container`, as Go names a struct type. */
export function structName(type: TypeRef | undefined): string {
  if (!type || !('ref' in type)) return ''
  return type.ref.slice(type.ref.lastIndexOf('.') + 1)
}
