/** What the protobuf codec asks of the type table. */
import type { TypeDef, TypeRef, TypeTable } from '../../resources/schema/index.js'

export function lookupType(name: string, types: TypeTable): TypeDef {
  const def = types[name]
  if (!def) throw new Error(`type ${name} is missing from the type table`)
  return def
}

/** Kinds with no field numbers (custom resources, Table) have no protobuf form. */
export function hasProtobufForm(def: TypeDef): boolean {
  return def.fields.some((f) => f.proto !== undefined)
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
