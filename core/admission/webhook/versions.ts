/**
 * The request as a webhook registered for another version of the same
 * resource sees it (`matchPolicy: Equivalent`): the resources kept in the
 * same storage are equivalent (apps/v1 and a custom resource's other
 * versions, events and events.k8s.io events, autoscaling/v1 and v2), and
 * the object is converted to the webhook's version through the storage
 * version, as the server converts it for reads (upstream's
 * EquivalentResourceMapper and VersionedAttributes).
 */
import { type Catalogue, type ResourceEntry, storagePath } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'

export interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

export interface GroupVersionResource {
  group: string
  version: string
  resource: string
}

/** The kind a request to the entry (or its subresource) carries. */
export function kindOf(entry: ResourceEntry, subresource: string | undefined): GroupVersionKind {
  const sub = subresource ? entry.subresources?.find((s) => s.name === subresource) : undefined
  if (sub) return { group: sub.group ?? entry.group, version: sub.version ?? entry.version, kind: sub.kind }
  return { group: entry.group, version: entry.version, kind: entry.kind }
}

export const resourceOf = (entry: ResourceEntry): GroupVersionResource => ({ group: entry.group, version: entry.version, resource: entry.resource })

/** The other entries kept in the entry's storage, in the catalogue's order (those serving the subresource, for a subresource). */
export function equivalentEntries(catalogue: Catalogue, entry: ResourceEntry, subresource: string | undefined): ResourceEntry[] {
  const path = storagePath(entry)
  return catalogue.entries.filter(
    (e) =>
      e !== entry &&
      e.resource === entry.resource &&
      storagePath(e) === path &&
      (!subresource || (e.subresources ?? []).some((s) => s.name === subresource)),
  )
}

/** Whether the request's object is of the resource's own kind (not a Scale, Eviction, Binding...), and so converts with it. */
export function carriesResourceKind(entry: ResourceEntry, subresource: string | undefined): boolean {
  return kindOf(entry, subresource).kind === entry.kind
}

/** `obj`, served as `from`, in the version `to` serves. */
export async function convertObject(obj: KubeObject, from: ResourceEntry, to: ResourceEntry): Promise<KubeObject> {
  if (from === to) return obj
  const stored = from.conversion ? await from.conversion.toStorage(structuredClone(obj)) : structuredClone(obj)
  return to.conversion ? await to.conversion.fromStorage(stored) : stored
}
