/**
 * The PVC and PV protection controllers of kube-controller-manager, run
 * in-process for StorageObjectInUseProtection: a claim being deleted keeps
 * its `kubernetes.io/pvc-protection` finalizer while a scheduled pod uses it,
 * and loses it once none does; a volume being deleted keeps
 * `kubernetes.io/pv-protection` while it is Bound. Without them, a protected
 * object would stay Terminating forever on this server alone.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import { followInformer } from '../client/informer.js'
import type { ObjectClient, ResourceRef } from '../client/object-client.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { controllerIdentity } from '../machinery/identities.js'
import { pods } from '../resources/core/pods.js'
import { persistentVolumeClaims, persistentVolumes } from '../resources/core/volumes.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'

export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection'
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection'

const PVC_PROTECTION_IDENTITY = controllerIdentity('pvc-protection-controller')
const PV_PROTECTION_IDENTITY = controllerIdentity('pv-protection-controller')

type Obj = Record<string, unknown>
const field = (o: unknown, name: string): unknown => (isPlainObject(o) ? o[name] : undefined)

const releasable = (obj: KubeObject, finalizer: string): boolean =>
  Boolean(obj.metadata.deletionTimestamp) && (obj.metadata.finalizers ?? []).includes(finalizer)

/**
 * Whether the pod holds the claim: only a scheduled pod counts (the kubelet
 * starts no pod on a claim being deleted); a generic ephemeral volume's claim
 * (`<pod>-<volume>`) only while the pod has not finished.
 */
export function podUsesClaim(pod: KubeObject, claimName: string): boolean {
  const spec = field(pod, 'spec')
  if (!field(spec, 'nodeName')) return false
  const phase = field(field(pod, 'status'), 'phase')
  const finished = phase === 'Succeeded' || phase === 'Failed'
  const volumes = field(spec, 'volumes')
  return (Array.isArray(volumes) ? volumes : []).some((volume: unknown) => {
    if (field(field(volume, 'persistentVolumeClaim'), 'claimName') === claimName) return true
    return !finished && field(volume, 'ephemeral') !== undefined && `${pod.metadata.name ?? ''}-${String(field(volume, 'name'))}` === claimName
  })
}

/** What the controllers read and write through. */
export interface StorageProtectionContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly logger: Logger
}

/** Starts both controllers; returns their stop. */
export function startStorageProtection({ client, informers, logger }: StorageProtectionContext): () => void {
  const claims = informers.informer(persistentVolumeClaims)
  const podInformer = informers.informer(pods)
  const volumes = informers.informer(persistentVolumes)

  // From the informer's copy; a conflict means a newer copy: read it and try again, as upstream requeues.
  const release = async (resource: ResourceRef, obj: KubeObject, finalizer: string, as: ObjectClient): Promise<void> => {
    const { namespace = '', name = '' } = obj.metadata
    let current = obj
    for (let attempt = 0; attempt < 3; attempt++) {
      const held = current.metadata.finalizers ?? []
      if (!held.includes(finalizer)) return
      const rest = held.filter((f) => f !== finalizer)
      try {
        await as.update(resource, namespace, { ...current, metadata: { ...current.metadata, finalizers: rest.length ? rest : undefined } } as KubeObject)
        return
      } catch (err) {
        if (hasStatusCode(err, 404)) return
        if (!hasStatusCode(err, 409)) {
          logger.warn({ namespace, name, finalizer, err: String(err) }, 'removing a storage protection finalizer failed; retried on the next change')
          return
        }
      }
      current = await as.get(resource, namespace, name).catch(() => ({ metadata: {} }) as KubeObject)
    }
  }
  const claimController = client.as(PVC_PROTECTION_IDENTITY, 'kube-controller-manager/pvc-protection-controller')
  const volumeController = client.as(PV_PROTECTION_IDENTITY, 'kube-controller-manager/pv-protection-controller')

  const checkClaim = async (claim: KubeObject): Promise<void> => {
    if (!releasable(claim, PVC_PROTECTION_FINALIZER)) return
    // Not before every pod is known (upstream's controller waits for its caches' sync): a claim is released only when no pod holds it.
    await podInformer.synced
    const namespace = claim.metadata.namespace ?? ''
    if (podInformer.list(namespace).some((pod) => podUsesClaim(pod, claim.metadata.name ?? ''))) return
    await release(persistentVolumeClaims, claim, PVC_PROTECTION_FINALIZER, claimController)
  }

  const checkVolume = async (volume: KubeObject): Promise<void> => {
    if (!releasable(volume, PV_PROTECTION_FINALIZER)) return
    if (field(field(volume, 'status'), 'phase') === 'Bound') return
    await release(persistentVolumes, volume, PV_PROTECTION_FINALIZER, volumeController)
  }

  // Claims being deleted, by namespace, so that a pod going away re-checks only its namespace's.
  const terminating = new Map<string, Map<string, KubeObject>>()
  const note = (claim: KubeObject, present: boolean): void => {
    const ns = claim.metadata.namespace ?? ''
    const held = terminating.get(ns) ?? new Map<string, KubeObject>()
    if (present && releasable(claim, PVC_PROTECTION_FINALIZER)) held.set(claim.metadata.name ?? '', claim)
    else held.delete(claim.metadata.name ?? '')
    if (held.size) terminating.set(ns, held)
    else terminating.delete(ns)
  }
  const failed = (err: unknown): void => logger.warn({ err: String(err) }, 'storage protection check failed')

  const feeds = [
    followInformer(claims, (event, claim) => {
      note(claim, event === 'upsert')
      if (event === 'upsert') checkClaim(claim).catch(failed)
    }),
    followInformer(podInformer, (_event, pod) => {
      for (const claim of terminating.get(pod.metadata.namespace ?? '')?.values() ?? []) checkClaim(claim).catch(failed)
    }),
    followInformer(volumes, (event, volume) => {
      if (event === 'upsert') checkVolume(volume as KubeObject & Obj).catch(failed)
    }),
  ]
  return () => feeds.forEach((f) => f.stop())
}
