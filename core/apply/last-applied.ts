/**
 * The upgrade path from client-side apply. When kubectl first applies
 * server-side (manager `kubectl`), fields recorded in the
 * kubectl.kubernetes.io/last-applied-configuration annotation that still
 * hold the recorded values count as kubectl's own, so they do not conflict
 * with `kubectl-client-side-apply`; and while the annotation exists, each
 * server-side apply by kubectl rewrites it, so client-side apply keeps working.
 */
import { jsonTooDeepAt } from '../machinery/limits.js'
import { setKey } from '../machinery/object.js'
import type { ApplyConflict } from './conflict.js'
import { FieldSet } from './fieldset.js'
import { goJson, type Json } from './path.js'
import { compareObjects, fieldSetOf, isObject, type Shape } from './typed.js'

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration'

/** The only manager name the upgrade applies to; other names opt out. */
export const KUBECTL_MANAGER = 'kubectl'

/** Upstream's limit on the total size of an object's annotations. */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

function annotationsOf(obj: unknown): Record<string, unknown> | undefined {
  const meta = isObject(obj) ? obj['metadata'] : undefined
  const annotations = isObject(meta) ? meta['annotations'] : undefined
  return isObject(annotations) ? annotations : undefined
}

export function lastAppliedOf(obj: unknown): string | undefined {
  const value = annotationsOf(obj)?.[LAST_APPLIED_ANNOTATION]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * The fields of the live object kubectl may take over without conflict:
 * those in the annotation whose values the live object still has.
 * Undefined when there is no usable annotation.
 */
export function allowedConflictsFromLastApplied(live: unknown, apiVersion: string, shape: Shape): FieldSet | undefined {
  const text = lastAppliedOf(live)
  // One nested past the bound of any decoded value is as unusable as one that is not JSON: the comparison below recurses into it.
  if (text === undefined || jsonTooDeepAt(text) !== undefined) return undefined
  let recorded: unknown
  try {
    recorded = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isObject(recorded) || recorded['apiVersion'] !== apiVersion) return undefined
  const c = compareObjects(recorded, live, shape)
  return fieldSetOf(recorded, shape).difference(c.modified).difference(c.added).difference(c.removed)
}

export function conflictsOutside(conflicts: readonly ApplyConflict[], allowed: FieldSet): ApplyConflict[] {
  return conflicts.filter((c) => !allowed.has(c.path))
}

/** A JSON value with every object's keys in order, as Go encodes a map. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) setKey(out, key, sortedKeys(value[key]))
  return out
}

/**
 * The annotation value for an applied configuration: the configuration
 * without the annotation itself (an annotations map left empty stays, as
 * upstream's unstructured object keeps it), encoded as Go's JSON encoder
 * writes it: keys sorted, HTML characters escaped, a closing newline.
 */
export function buildLastApplied(applied: Record<string, unknown>): string {
  const copy = structuredClone(applied)
  delete annotationsOf(copy)?.[LAST_APPLIED_ANNOTATION]
  return `${goJson(sortedKeys(copy) as Json)}\n`
}

/** Sets the annotation on obj, or drops it when the annotations would grow past the size limit. */
export function setLastApplied(obj: Record<string, unknown>, value: string): void {
  const meta = (isObject(obj['metadata']) ? obj['metadata'] : (obj['metadata'] = {})) as Record<string, unknown>
  const annotations: Record<string, unknown> = { ...(annotationsOf(obj) ?? {}), [LAST_APPLIED_ANNOTATION]: value }
  let size = 0
  for (const [k, v] of Object.entries(annotations)) size += k.length + String(v).length
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION]
  meta['annotations'] = annotations
}
