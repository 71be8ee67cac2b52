/**
 * Whether a merged object still fits its type where structure is concerned
 * (objects where structs and maps belong, lists where lists belong). Upstream
 * finds this out while converting the merged map into the typed object; the
 * wording is that converter's. Scalars are left to the body decoder.
 */
import type { TypeRef, TypeTable } from '../resources/schema/model.js'
import { isJsonMap } from '../machinery/go-format.js'
import { isRaw, lookupField } from './schema.js'

/** Go's reflect.Kind name of a decoded JSON value. */
function goKind(value: unknown): string {
  if (Array.isArray(value)) return 'slice'
  if (isJsonMap(value)) return 'map'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64'
  return typeof value === 'boolean' ? 'bool' : 'string'
}

function mismatch(value: unknown, restoring: 'struct' | 'slice' | 'map'): string {
  return restoring === 'struct'
    ? `cannot restore struct from: ${goKind(value)}`
    : `cannot restore ${restoring} from ${goKind(value)}`
}

/** The converter's complaint about the first value that does not fit, or undefined. */
export function shapeError(value: unknown, type: TypeRef | undefined, types: TypeTable): string | undefined {
  if (value === null || value === undefined || type === undefined || 'scalar' in type) return undefined
  if ('array' in type) {
    if (!Array.isArray(value)) return mismatch(value, 'slice')
    for (const item of value) {
      const problem = shapeError(item, type.array, types)
      if (problem) return problem
    }
    return undefined
  }
  if ('map' in type) {
    if (!isJsonMap(value)) return mismatch(value, 'map')
    for (const item of Object.values(value)) {
      const problem = shapeError(item, type.map, types)
      if (problem) return problem
    }
    return undefined
  }
  if (isRaw(type, types)) return undefined
  if (!isJsonMap(value)) return mismatch(value, 'struct')
  for (const [key, item] of Object.entries(value)) {
    const problem = shapeError(item, lookupField(type, key, types).type, types)
    if (problem) return problem
  }
  return undefined
}
