/** What the stores do to objects besides storing them: revision stamps, freezing, comparison. */
import { withResourceVersion } from '../encoding/canonical.js'
import { isDeepFrozen, markDeepFrozen } from '../encoding/immutable.js'
import type { KubeObject } from '../machinery/object.js'
import { type Checkpointed, StepCounter } from '../machinery/time-slice.js'

/**
 * Sets `metadata.resourceVersion` to the revision (stored bytes never carry
 * one: the revision is the truth), in the place Go writes it, so an object
 * kept in canonical order stays so.
 */
export function stampRevision(obj: KubeObject, revision: number): KubeObject {
  if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {}
  obj.metadata = withResourceVersion(obj, obj.metadata as Record<string, unknown>, String(revision))
  return obj
}

export function revisionOf(obj: KubeObject): number {
  return Number(obj.metadata.resourceVersion)
}

/**
 * Objects shared between watchers are frozen, so a predicate that changes one
 * fails loudly instead of leaking. The object is then known never to change
 * again, so its encodings may be kept beside it (encoding/immutable.ts).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || isDeepFrozen(value)) return value
  freezeAll(value)
  markDeepFrozen(value)
  return value
}

/** Freezes every part, including parts frozen before whose own parts may not be. */
function freezeAll(value: object): void {
  Object.freeze(value)
  for (const v of Object.values(value)) if (typeof v === 'object' && v !== null && !isDeepFrozen(v)) freezeAll(v)
}

/** deepFreeze as checkpointed work, for an object of megabytes: a checkpoint every few thousand parts. */
export function* deepFreezeInSteps<T>(value: T): Checkpointed<T> {
  if (typeof value !== 'object' || value === null || isDeepFrozen(value)) return value
  yield* freezeAllInSteps(value, new StepCounter())
  markDeepFrozen(value)
  return value
}

function* freezeAllInSteps(value: object, counter: StepCounter): Checkpointed<void> {
  Object.freeze(value)
  for (const v of Object.values(value)) {
    if (counter.add()) yield
    if (typeof v === 'object' && v !== null && !isDeepFrozen(v)) yield* freezeAllInSteps(v, counter)
  }
}

/** True when an update changes nothing but (maybe) the resourceVersion: upstream then writes nothing. */
export function sameIgnoringResourceVersion(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } })
  return jsonEqual(strip(a), strip(b))
}

/** Structural equality of JSON data; an undefined property equals an absent one, as in the serialized form. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]))
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined)
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && jsonEqual(ra[k], rb[k]))
}
