/**
 * Merging an aggregated APIService's `/openapi/v2` document into the
 * server's own, by the rules of kube-openapi's aggregator
 * (MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters, after
 * kube-aggregator filters each download to `/apis/`):
 *
 * - only the extension's paths under `/apis/` are taken, and a path the
 *   merged document already has keeps its first owner (the server's own
 *   paths come first, then extensions by priority);
 * - of its definitions only those its taken paths reach are kept;
 * - a definition whose name is taken by an equal one is shared; one that
 *   differs is renamed `<name>_v2` (`_v3`, ... whichever is free), and the
 *   extension's references to it follow.
 */
import type { JsonObject, JsonValue } from './openapi.js'

const DEFINITION_REF = '#/definitions/'

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Every definition name `value` refers to, into `into`. */
function collectRefs(value: JsonValue, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into)
    return
  }
  if (!isObject(value)) return
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && typeof item === 'string' && item.startsWith(DEFINITION_REF)) into.add(item.slice(DEFINITION_REF.length))
    else collectRefs(item, into)
  }
}

/** The definitions the paths reach, directly or through other definitions. */
function reachable(paths: JsonObject, definitions: JsonObject): string[] {
  const seen = new Set<string>()
  collectRefs(paths, seen)
  const queue = [...seen]
  while (queue.length > 0) {
    const name = queue.pop()!
    const schema = definitions[name]
    if (schema === undefined) continue
    const found = new Set<string>()
    collectRefs(schema, found)
    for (const next of found) {
      if (!seen.has(next)) {
        seen.add(next)
        queue.push(next)
      }
    }
  }
  return [...seen].filter((name) => Object.hasOwn(definitions, name))
}

function renameRefs(value: JsonValue, renames: ReadonlyMap<string, string>): JsonValue {
  if (Array.isArray(value)) return value.map((item) => renameRefs(item, renames))
  if (!isObject(value)) return value
  const out: JsonObject = {}
  for (const [key, item] of Object.entries(value)) {
    const renamed = key === '$ref' && typeof item === 'string' && item.startsWith(DEFINITION_REF) ? renames.get(item.slice(DEFINITION_REF.length)) : undefined
    out[key] = renamed !== undefined ? DEFINITION_REF + renamed : renameRefs(item, renames)
  }
  return out
}

/** Equal as decoded JSON: member order does not count (upstream compares decoded schemas). */
function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
}

/** Adds `source`'s paths and definitions to `paths` and `definitions` (both changed in place). */
function mergeOne(paths: JsonObject, definitions: JsonObject, source: JsonObject): void {
  const sourcePaths = isObject(source['paths']) ? source['paths'] : {}
  const sourceDefinitions = isObject(source['definitions']) ? source['definitions'] : {}
  const taken: JsonObject = {}
  for (const [path, item] of Object.entries(sourcePaths)) {
    if (path.startsWith('/apis/') && !Object.hasOwn(paths, path)) taken[path] = item
  }
  const kept = reachable(taken, sourceDefinitions)
  const keptSet = new Set(kept)
  const renames = new Map<string, string>()
  const used = new Set(Object.keys(definitions))
  for (const name of kept) {
    if (!Object.hasOwn(definitions, name) || sameJson(definitions[name], sourceDefinitions[name])) continue
    let n = 2
    while (used.has(`${name}_v${n}`) || keptSet.has(`${name}_v${n}`)) n++
    renames.set(name, `${name}_v${n}`)
    used.add(`${name}_v${n}`)
  }
  const rewrite = (v: JsonValue) => (renames.size > 0 ? renameRefs(v, renames) : v)
  for (const name of kept) {
    const target = renames.get(name) ?? name
    if (!Object.hasOwn(definitions, target)) definitions[target] = rewrite(sourceDefinitions[name]!)
  }
  for (const [path, item] of Object.entries(taken)) paths[path] = rewrite(item)
}

/** The server's own v2 document with the extensions' documents merged in, in the order given; `local` is not changed. */
export function mergeAggregatedV2(local: JsonObject, extensions: readonly JsonObject[]): JsonObject {
  const paths: JsonObject = { ...(isObject(local['paths']) ? local['paths'] : {}) }
  const definitions: JsonObject = { ...(isObject(local['definitions']) ? local['definitions'] : {}) }
  for (const source of extensions) mergeOne(paths, definitions, source)
  const sorted: JsonObject = {}
  for (const name of Object.keys(definitions).sort()) sorted[name] = definitions[name]!
  return { ...local, paths, definitions: sorted }
}
