/** JSON values compared as values: object key order and undefined members do not count. */
import { isPlainObject } from './object.js'

/** Deep equality of JSON values, whatever the order of object keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, i) => sameJson(v, b[i]))
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false
  const keys = Object.keys(a).filter((k) => a[k] !== undefined)
  if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false
  return keys.every((k) => sameJson(a[k], b[k]))
}
