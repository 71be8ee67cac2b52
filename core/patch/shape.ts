/**
 * Whether a merged object still fits its type where structure is concerned
 * (objects where structs and maps belong, lists where lists belong). Upstream
 * finds this out while converting the merged map into the typed object; the
 * wording is that converter's. Scalars are left to the body decoder.
 */
import type { TypeRef, TypeTable } from '../resources/schema/model.js'
import { isJsonMap } from '../machinery/go-format.js'
import { isRaw, lookupField } from './schema.js'
import { mergeSteps } from './directives.js'
import type { Checkpointed } from '../machinery/time-slice.js'

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

/** Whether `value` fits `type` without a look inside (most leaves): the walk below goes into the rest. */
const fitsAtOnce = (value: unknown, type: TypeRef | undefined): boolean => value === null || value === undefined || type === undefined || 'scalar' in type

/** The converter's complaint about the first value that does not fit, or undefined (checkpointed: the merged object may be megabytes). */
export function* shapeError(value: unknown, type: TypeRef | undefined, types: TypeTable): Checkpointed<string | undefined> {
  if (fitsAtOnce(value, type)) return undefined
  return yield* problemInside(value, type!, types)
}

function* problemInside(value: unknown, type: TypeRef, types: TypeTable): Checkpointed<string | undefined> {
  if ('array' in type) {
    if (!Array.isArray(value)) return mismatch(value, 'slice')
    for (const item of value) {
      const problem = fitsAtOnce(item, type.array) ? undefined : yield* problemInside(item, type.array, types)
      if (problem) return problem
      if (mergeSteps.add()) yield
    }
    return undefined
  }
  if ('map' in type) {
    if (!isJsonMap(value)) return mismatch(value, 'map')
    for (const key of Object.keys(value)) {
      const item = value[key]
      const problem = fitsAtOnce(item, type.map) ? undefined : yield* problemInside(item, type.map, types)
      if (problem) return problem
      if (mergeSteps.add()) yield
    }
    return undefined
  }
  if (isRaw(type, types)) return undefined
  if (!isJsonMap(value)) return mismatch(value, 'struct')
  for (const key of Object.keys(value)) {
    const item = value[key]
    const itemType = lookupField(type, key, types).type
    const problem = fitsAtOnce(item, itemType) ? undefined : yield* problemInside(item, itemType!, types)
    if (problem) return problem
  }
  return undefined
}
