/** What the protobuf codec asks of the type table. */
import type { FieldDef, JsonForms, TypeDef, TypeRef, TypeTable } from '../../resources/schema/index.js'
import { jsonFormOf } from '../../resources/schema/index.js'

export function lookupType(name: string, types: TypeTable): TypeDef {
  const def = types[name]
  if (!def) throw new Error(`type ${name} is missing from the type table`)
  return def
}

/** Kinds with no field numbers (custom resources, Table) have no protobuf form. */
export function hasProtobufForm(def: TypeDef): boolean {
  return def.fields.some((f) => f.proto !== undefined)
}

/** A field's place in error messages (`Type.field`), joined only when one is thrown. */
export function fieldPlace(owner: string, field: string): string {
  return field ? `${owner}.${field}` : owner
}

export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
}

/** What an entry without a value means: the value type's zero. */
export function zeroValue(t: TypeRef): unknown {
  if ('array' in t) return []
  if ('map' in t || 'ref' in t) return {}
  switch (t.scalar) {
    case 'string':
    case 'bytes':
      return ''
    case 'boolean':
      return false
    case 'quantity':
      return '0'
    case 'raw':
    case 'time':
    case 'microtime':
      return null
    case 'duration':
      return '0s'
    default:
      return 0
  }
}

const wrappers = new WeakMap<JsonForms, TypeDef>()

/** The protobuf message that carries a value of a type with several JSON forms: one field per form. */
export function formsWrapper(name: string, forms: JsonForms): TypeDef {
  let wrapper = wrappers.get(forms)
  if (!wrapper) {
    const { object, array, boolean } = forms
    wrapper = { name, fields: [object, array, boolean].filter((f): f is FieldDef => f !== undefined) }
    wrappers.set(forms, wrapper)
  }
  return wrapper
}

/**
 * The wrapper message's fields for a JSON value. A schema in
 * JSONSchemaPropsOrBool also sets the boolean: upstream's type says "allowed"
 * whenever it holds a schema.
 */
export function wrapForms(forms: JsonForms, value: unknown): Record<string, unknown> {
  const form = jsonFormOf(forms, value)
  if (!form) return {}
  const wrapped: Record<string, unknown> = { [form.name]: value }
  if (form === forms.object && forms.boolean) wrapped[forms.boolean.name] = true
  return wrapped
}

/** The JSON value a decoded wrapper message stands for, as upstream's marshaller writes it; undefined for null. */
export function unwrapForms(forms: JsonForms, wrapped: Record<string, unknown>): unknown {
  if (forms.object && wrapped[forms.object.name] !== undefined) return wrapped[forms.object.name]
  const list = forms.array ? wrapped[forms.array.name] : undefined
  if (Array.isArray(list) && list.length > 0) return list
  if (forms.boolean) return wrapped[forms.boolean.name] === true
  return undefined
}
