/** Rules ConfigMaps and Secrets share: data keys, total size, immutability. */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, typeInvalid } from '../../machinery/field.js'
import { isConfigMapKey } from '../../machinery/names.js'

/** Upstream's MaxSecretSize, which ConfigMaps share. */
export const MAX_DATA_SIZE = 1024 * 1024

/**
 * Checks a map's keys; returns the byte size of its values as counted by
 * `sizeOf`, which may stop counting once a value passes the bytes still
 * `allowed` (the sum is then above the limit, all a caller asks).
 */
export function validateDataMap(
  value: unknown,
  path: FieldPath,
  errs: FieldError[],
  sizeOf: (v: string, allowed: number) => number,
): number {
  if (value === undefined || value === null) return 0
  if (!isPlainObject(value)) {
    errs.push(typeInvalid(path, value, 'must be a map of string to string'))
    return 0
  }
  let size = 0
  // Keys by `in` rather than Object.entries: no pair allocated for each of tens of thousands.
  for (const k in value) {
    const v = value[k]
    const problems = isConfigMapKey(k)
    if (problems.length > 0) for (const msg of problems) errs.push(invalid(path.key(k), k, msg))
    if (typeof v !== 'string') errs.push(typeInvalid(path.key(k), v, 'must be a string'))
    else size += sizeOf(v, MAX_DATA_SIZE - size)
  }
  return size
}

/** Byte length of base64 data once decoded. */
export function decodedLength(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0
  return Math.floor((b64.length * 3) / 4) - padding
}

export { utf8Length, utf8LengthUpTo } from '../../machinery/utf8-length.js'

/** Once `immutable: true`, the data fields and the flag itself stay as they are. */
export function validateImmutableData(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old['immutable'] !== true) return []
  const errs: FieldError[] = []
  if (obj['immutable'] !== true)
    errs.push(forbiddenField(fieldPath('immutable'), 'field is immutable when `immutable` is set'))
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {}))
      errs.push(forbiddenField(fieldPath(f), 'field is immutable when `immutable` is set'))
  }
  return errs
}

export function dataCount(obj: KubeObject, ...fields: string[]): number {
  let n = 0
  for (const f of fields) {
    const m = obj[f]
    if (isPlainObject(m)) n += Object.keys(m).length
  }
  return n
}
