/**
 * Objects answered as their metadata alone (`Accept:
 * application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, and
 * `as=PartialObjectMetadataList` for a list), as client-go's metadata
 * clients ask for them first (the garbage collector, the namespace
 * controller, metadata-only informers): upstream's handlers turn the object
 * into a PartialObjectMetadata carrying its whole ObjectMeta, and a list
 * into a PartialObjectMetadataList whose items each name their kind. A
 * list asked for as one object, or one object as a list, is refused with
 * 406 in upstream's words, which name the Go type of the stored object.
 */
import { isDeepFrozen } from '../encoding/immutable.js'
import type { KubeObject, ListMeta } from '../machinery/object.js'
import { StatusError } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { goInternalTypeName } from './go-type-names.js'
import { deepFreeze } from '../storage/objects.js'

/**
 * The PartialObjectMetadata (meta.k8s.io/v1) of each immutable object
 * version (the watch cache's), kept frozen, so that its text is written once
 * (encoding/api-json.ts) however often that version is answered so.
 */
const keptV1 = new WeakMap<object, KubeObject>()

/** `obj` as a PartialObjectMetadata of meta.k8s.io `version` (v1 or v1beta1). */
export function partialObjectMetadata(obj: KubeObject, version = 'v1'): KubeObject {
  const partial = (): KubeObject => ({ kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata })
  if (version !== 'v1' || !isDeepFrozen(obj as unknown)) return partial()
  let kept = keptV1.get(obj)
  if (!kept) {
    kept = deepFreeze(partial())
    keptV1.set(obj, kept)
  }
  return kept
}

/** A list's items as a PartialObjectMetadataList of meta.k8s.io `version`, its list metadata kept. */
export function partialObjectMetadataList(items: readonly KubeObject[], listMeta: ListMeta, version: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = {}
  if (listMeta.resourceVersion) metadata['resourceVersion'] = listMeta.resourceVersion
  if (listMeta.continue) metadata['continue'] = listMeta.continue
  if (listMeta.remainingItemCount !== undefined) metadata['remainingItemCount'] = listMeta.remainingItemCount
  // Upstream appends each item to a list it starts empty: with none, its items are Go's nil slice, written null.
  const partials = items.length > 0 ? items.map((item) => partialObjectMetadata(item, version)) : null
  return { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${version}`, metadata, items: partials }
}

/** Upstream's 406 for one object asked for as a list, or a list as one object. */
export function partialMetadataMismatch(entry: ResourceEntry, askedForList: boolean): StatusError {
  const message = askedForList
    ? `you requested PartialObjectMetadataList, but the requested object is not a list (${goInternalTypeName(entry, false)})`
    : `you requested PartialObjectMetadata, but the requested object is a list (${goInternalTypeName(entry, true)})`
  return new StatusError(406, 'NotAcceptable', message)
}
