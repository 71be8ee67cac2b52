/**
 * JSON merge patch (RFC 7386) for the values a strategic merge patch has no
 * type for (raw JSON fields): objects merge, null deletes, the rest replaces.
 */
import { setKey } from './directives.js'
import { isJsonMap, type JsonMap } from '../machinery/go-format.js'
import { cloneJson } from '../machinery/object.js'

export function jsonMerge(target: unknown, patch: unknown): unknown {
  if (!isJsonMap(patch)) return cloneJson(patch)
  const out: JsonMap = isJsonMap(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else setKey(out, key, jsonMerge(Object.hasOwn(out, key) ? out[key] : undefined, value))
  }
  return out
}
