/**
 * What the pod subresources with a strategy of their own (ephemeral
 * containers, resize) keep of a written pod's metadata: its identity and
 * managed fields, everything else as stored (upstream's
 * ResetObjectMetaForStatus, and the request's resourceVersion so that a
 * stale write still conflicts).
 */
import type { KubeObject } from '../../machinery/object.js'

export { MIRROR_POD_ANNOTATION } from '../../machinery/object.js'

/** A copy of the stored pod carrying the written pod's name, namespace, uid, resourceVersion and managedFields. */
export function storedPodWithRequestIdentity(obj: KubeObject, old: KubeObject): KubeObject {
  const out = structuredClone(old)
  out.metadata.name = obj.metadata.name ?? old.metadata.name
  if (obj.metadata.namespace !== undefined) out.metadata.namespace = obj.metadata.namespace
  if (obj.metadata.uid !== undefined) out.metadata.uid = obj.metadata.uid
  if (obj.metadata.resourceVersion) out.metadata.resourceVersion = obj.metadata.resourceVersion
  else delete out.metadata.resourceVersion
  if (obj.metadata.managedFields !== undefined) out.metadata.managedFields = obj.metadata.managedFields
  return out
}
