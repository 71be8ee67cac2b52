/**
 * The status half of an object, as upstream's status strategies split it: for
 * a resource with a `status` subresource, the main endpoint leaves the status
 * alone and `<resource>/status` leaves everything else alone. Also the
 * generation, which counts the changes a controller has to act on.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import { cloneJson, isPlainObject, type KubeObject } from '../machinery/object.js'
import { sameJson } from '../machinery/same-json.js'
import { goEncodedCopy } from '../encoding/canonical.js'

/** Whether writes through `<resource>/status` are the only way to change `.status`. */
export function hasStatusSubresource(entry: ResourceEntry): boolean {
  return entry.subresources?.some((s) => s.name === 'status') ?? false
}

/** Main endpoint: whatever the body says about `.status`, the stored status stays. */
export function keepStoredStatus(entry: ResourceEntry, obj: KubeObject, old: KubeObject): void {
  if (!hasStatusSubresource(entry)) return
  if (old['status'] === undefined) delete obj['status']
  else obj['status'] = cloneJson(old['status'])
}

/** Everything outside metadata and status (spec and any other top-level field) as stored, over `obj`. */
function keepStoredBody(obj: KubeObject, old: KubeObject): void {
  for (const key of Object.keys(obj)) if (!BODY_FREE.has(key) && !(key in old)) delete obj[key]
  for (const [key, value] of Object.entries(old)) if (!BODY_FREE.has(key)) obj[key] = cloneJson(value)
}

const BODY_FREE = new Set(['apiVersion', 'kind', 'metadata', 'status'])

/** A body without managedFields leaves the stored ones, as upstream's field manager reads a missing list. */
function keepStoredManagedFields(out: KubeObject, old: KubeObject): void {
  if (out.metadata.managedFields === undefined && old.metadata.managedFields !== undefined) out.metadata.managedFields = cloneJson(old.metadata.managedFields)
}

/**
 * Status endpoint, as the resource's upstream status strategy prepares an
 * update: the body's status and metadata (its labels and annotations too),
 * the stored spec, and the stored values of the metadata the strategy
 * resets (`keepsStoredMetadata` of the status subresource; a custom
 * resource keeps its whole stored metadata). The body's resourceVersion is
 * kept, so that a stale one still conflicts, and its managedFields, which
 * a server-side apply of the status has just settled.
 */
export function withStatusOnly(entry: ResourceEntry, obj: KubeObject, old: KubeObject): KubeObject {
  const out = cloneJson(obj)
  keepStoredBody(out, old)
  keepStoredManagedFields(out, old)
  const kept = entry.subresources?.find((s) => s.name === 'status')?.keepsStoredMetadata ?? []
  if (kept === 'all') {
    const { managedFields, resourceVersion } = out.metadata
    out.metadata = cloneJson(old.metadata)
    if (managedFields !== undefined) out.metadata.managedFields = managedFields
    if (resourceVersion) out.metadata.resourceVersion = resourceVersion
    else delete out.metadata.resourceVersion
    return out
  }
  for (const field of kept) {
    if (old.metadata[field] === undefined) delete out.metadata[field]
    else (out.metadata as Record<string, unknown>)[field] = cloneJson(old.metadata[field])
  }
  return out
}

/**
 * A write through a CertificateSigningRequest's `approval` subresource
 * (upstream's csrApprovalStrategy): the body's metadata and conditions, the
 * stored spec and the rest of the stored status (the certificate).
 */
export function withConditionsOnly(obj: KubeObject, old: KubeObject): KubeObject {
  const out = cloneJson(obj)
  keepStoredBody(out, old)
  const sent = isPlainObject(obj['status']) ? obj['status']['conditions'] : undefined
  const status = isPlainObject(old['status']) ? cloneJson(old['status']) : {}
  if (sent === undefined) delete status['conditions']
  else status['conditions'] = cloneJson(sent)
  out['status'] = status
  keepStoredManagedFields(out, old)
  return out
}

/**
 * A namespace's `finalize` (upstream's namespaceFinalizeStrategy): the
 * request's metadata and spec, its finalizers above all, with the stored status.
 */
export function withStoredStatus(obj: KubeObject, old: KubeObject): KubeObject {
  const out = cloneJson(obj)
  if (old['status'] === undefined) delete out['status']
  else out['status'] = cloneJson(old['status'])
  keepStoredManagedFields(out, old)
  return out
}

/** A created object of a generation-tracking resource starts at generation 1. */
export function initialGeneration(entry: ResourceEntry, obj: KubeObject): void {
  if (entry.tracksGeneration) obj.metadata.generation = 1
}

/** Bumps the generation when anything but metadata and status changed. */
export function nextGeneration(entry: ResourceEntry, obj: KubeObject, old: KubeObject): void {
  if (entry.tracksGeneration !== true) return
  const generation = old.metadata.generation ?? 0
  obj.metadata.generation = sameJson(desired(obj), desired(old)) ? generation : generation + 1
}

/**
 * What the user asked for: the object without its metadata and status (and
 * type fields), as Go encodes it: upstream compares decoded structs, where
 * an unset field and its empty value are the same.
 */
function desired(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = obj
  const { apiVersion: _v, kind: _k, ...encoded } = goEncodedCopy(rest)
  return encoded
}

