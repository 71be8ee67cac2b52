/**
 * Owner references as upstream's controller-ref manager reads and writes
 * them: an object has at most one controller; a controller adopts the
 * orphans its selector matches and releases what it owns and no longer
 * matches, each as a write through the client guarded by the object's
 * uid and resourceVersion (a conflict requeues the owner's key).
 */
import type { ObjectClient, ResourceRef } from '../../client/object-client.js'
import type { LabelSelector } from '../../machinery/label-selector.js'
import type { KubeObject, OwnerReference } from '../../machinery/object.js'
import { controllerOf } from './object-keys.js'

/** The reference a controller puts on what it makes: controller, and blocking its owner's foreground deletion. */
export function controllerRefTo(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? '',
    kind: owner.kind ?? '',
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  }
}

export interface ClaimOptions {
  client: ObjectClient
  /** The resource of the claimed objects (pods, replicasets). */
  resource: ResourceRef
  owner: KubeObject
  selector: LabelSelector
  /** Reads the owner fresh before the first adoption: one deleted and recreated under the same name must not adopt. */
  recheckOwner: () => Promise<KubeObject | undefined>
  /** Finalizers an adoption adds and a release takes off (a Job's pods carry its tracking finalizer). */
  finalizers?: readonly string[]
}

/**
 * The objects `owner` controls after adopting matching orphans and
 * releasing owned objects its selector no longer matches (upstream's
 * ClaimPods / ClaimReplicaSets). Objects being deleted are neither adopted
 * nor released.
 */
export async function claim(candidates: readonly KubeObject[], options: ClaimOptions): Promise<KubeObject[]> {
  const { owner, selector, client, resource } = options
  const uid = owner.metadata.uid
  const claimed: KubeObject[] = []
  let ownerChecked: boolean | undefined
  for (const object of candidates) {
    const ref = controllerOf(object)
    const matches = selector.matches(object.metadata.labels)
    if (ref) {
      if (ref.uid !== uid) continue
      if (matches || object.metadata.deletionTimestamp || owner.metadata.deletionTimestamp) {
        claimed.push(object)
        continue
      }
      await write(client, resource, object, (refs) => refs.filter((r) => r.uid !== uid), withoutFinalizers(object, options.finalizers))
      continue
    }
    if (!matches || object.metadata.deletionTimestamp || owner.metadata.deletionTimestamp) continue
    if (ownerChecked === undefined) {
      const fresh = await options.recheckOwner()
      ownerChecked = fresh?.metadata.uid === uid && !fresh?.metadata.deletionTimestamp
    }
    if (!ownerChecked) continue
    const adopted = await write(client, resource, object, (refs) => [...refs, controllerRefTo(owner)], withFinalizers(object, options.finalizers))
    if (adopted) claimed.push(adopted)
  }
  return claimed
}

/**
 * Rewrites the owner references with a merge patch guarded by the object's
 * uid and resourceVersion (a patch, as upstream adopts and releases: the
 * controllers' roles grant `patch` on what they own, not `update`); an
 * object already gone counts as released (answers undefined).
 */
async function write(
  client: ObjectClient,
  resource: ResourceRef,
  object: KubeObject,
  change: (refs: OwnerReference[]) => OwnerReference[],
  finalizers: string[] | undefined,
): Promise<KubeObject | undefined> {
  const { uid, resourceVersion } = object.metadata
  const patch = { metadata: { uid, resourceVersion, ownerReferences: change(object.metadata.ownerReferences ?? []), ...(finalizers ? { finalizers } : {}) } }
  try {
    return await client.patch(resource, object.metadata.namespace ?? '', object.metadata.name ?? '', 'merge', patch)
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined
    throw err
  }
}

/** The object's finalizers with `added` joined, or undefined when nothing changes. */
function withFinalizers(object: KubeObject, added: readonly string[] | undefined): string[] | undefined {
  const current = object.metadata.finalizers ?? []
  const missing = (added ?? []).filter((f) => !current.includes(f))
  return missing.length ? [...current, ...missing] : undefined
}

/** The object's finalizers without `removed`, or undefined when nothing changes. */
function withoutFinalizers(object: KubeObject, removed: readonly string[] | undefined): string[] | undefined {
  const current = object.metadata.finalizers ?? []
  const kept = current.filter((f) => !removed?.includes(f))
  return kept.length === current.length ? undefined : kept
}
