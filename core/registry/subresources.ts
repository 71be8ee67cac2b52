/**
 * The status half of an object, as upstream's status strategies split it: for
 * a resource with a `status` subresource, the main endpoint leaves the status
 * alone and `<resource>/status` leaves everything else alone. Also the
 * generation, which counts the changes a controller has to act on.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'

/** Whether writes through `<resource>/status` are the only way to change `.status`. */
export function hasStatusSubresource(entry: ResourceEntry): boolean {
  return entry.subresources?.some((s) => s.name === 'status') ?? false
}

/** Main endpoint: whatever the body says about `.status`, the stored status stays. */
export function keepStoredStatus(entry: ResourceEntry, obj: KubeObject, old: KubeObject): void {
  if (!hasStatusSubresource(entry)) return
  if (old['status'] === undefined) delete obj['status']
  else obj['status'] = structuredClone(old['status'])
}

/**
 * Status endpoint: the stored object with the body's status. The body's
 * resourceVersion is kept, so that a stale one still conflicts, and its
 * managedFields, which a server-side apply of the status has just settled.
 */
export function withStatusOnly(obj: KubeObject, old: KubeObject): KubeObject {
  const out = structuredClone(old)
  if (obj['status'] === undefined) delete out['status']
  else out['status'] = obj['status']
  if (obj.metadata.managedFields !== undefined) out.metadata.managedFields = obj.metadata.managedFields
  const rv = obj.metadata.resourceVersion
  if (rv) out.metadata.resourceVersion = rv
  else delete out.metadata.resourceVersion
  return out
}

/**
 * A write through a CertificateSigningRequest's `approval` subresource
 * changes its conditions alone (upstream's csrApprovalStrategy): the spec,
 * the certificate and the metadata stay as stored.
 */
export function withConditionsOnly(obj: KubeObject, old: KubeObject): KubeObject {
  const out = structuredClone(old)
  const status = isPlainObject(out['status']) ? out['status'] : (out['status'] = {})
  const sent = isPlainObject(obj['status']) ? obj['status']['conditions'] : undefined
  if (sent === undefined) delete status['conditions']
  else status['conditions'] = sent
  if (obj.metadata.managedFields !== undefined) out.metadata.managedFields = obj.metadata.managedFields
  const rv = obj.metadata.resourceVersion
  if (rv) out.metadata.resourceVersion = rv
  else delete out.metadata.resourceVersion
  return out
}

/**
 * A write through a Namespace's `finalize` subresource changes its
 * spec.finalizers alone (what the namespace controller removes once the
 * namespace is empty): the metadata and status stay as stored.
 */
export function withFinalizersOnly(obj: KubeObject, old: KubeObject): KubeObject {
  const out = structuredClone(old)
  const spec = isPlainObject(out['spec']) ? out['spec'] : (out['spec'] = {})
  const sent = isPlainObject(obj['spec']) ? obj['spec']['finalizers'] : undefined
  if (sent === undefined) delete spec['finalizers']
  else spec['finalizers'] = sent
  if (obj.metadata.managedFields !== undefined) out.metadata.managedFields = obj.metadata.managedFields
  const rv = obj.metadata.resourceVersion
  if (rv) out.metadata.resourceVersion = rv
  else delete out.metadata.resourceVersion
  return out
}

/** A created object of a generation-tracking resource starts at generation 1. */
export function initialGeneration(entry: ResourceEntry, obj: KubeObject): void {
  if (entry.tracksGeneration) obj.metadata.generation = 1
}

/** Bumps the generation when anything but metadata and status changed. */
export function nextGeneration(entry: ResourceEntry, obj: KubeObject, old: KubeObject): void {
  if (!entry.tracksGeneration) return
  const generation = old.metadata.generation ?? 0
  obj.metadata.generation = sameJson(desired(obj), desired(old)) ? generation : generation + 1
}

/** What the user asked for: the object without its metadata and status (and type fields). */
function desired(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _v, kind: _k, ...rest } = obj
  return rest
}

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
