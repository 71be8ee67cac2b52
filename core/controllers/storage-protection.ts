/**
 * The PVC and PV protection controllers of kube-controller-manager, run
 * in-process for StorageObjectInUseProtection: a claim being deleted keeps
 * its `kubernetes.io/pvc-protection` finalizer while a scheduled pod uses it,
 * and loses it once none does; a volume being deleted keeps
 * `kubernetes.io/pv-protection` while it is Bound. Without them, a protected
 * object would stay Terminating forever on this server alone.
 */
import { feedObjects } from '../authz/object-feed.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { controllerIdentity } from '../registry/identities.js'
import type { Registry } from '../registry/registry.js'
import { pods } from '../resources/core/pods.js'
import { persistentVolumeClaims, persistentVolumes } from '../resources/core/volumes.js'
import type { ResourceEntry } from '../resources/catalogue.js'
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

/** Starts both controllers; returns their stop. */
export function startStorageProtection(registry: Registry, now: () => Date, logger: Logger): { ready: Promise<void>; stop(): void } {
  const claimStore = registry.store(persistentVolumeClaims)
  const podStore = registry.store(pods)
  const volumeStore = registry.store(persistentVolumes)

  const release = async (entry: ResourceEntry, obj: KubeObject, finalizer: string, user: typeof PV_PROTECTION_IDENTITY): Promise<void> => {
    const store = registry.store(entry)
    const { namespace = '', name = '' } = obj.metadata
    try {
      await store.update(
        namespace,
        name,
        (current) => {
          const rest = (current.metadata.finalizers ?? []).filter((f) => f !== finalizer)
          if (rest.length) current.metadata.finalizers = rest
          else delete current.metadata.finalizers
          return current
        },
        { user, now: now(), dryRun: false },
      )
    } catch (err) {
      if (!hasStatusCode(err, 404) && !hasStatusCode(err, 409))
        logger.warn({ namespace, name, finalizer, err: String(err) }, 'removing a storage protection finalizer failed; retried on the next change')
    }
  }

  const checkClaim = async (claim: KubeObject): Promise<void> => {
    if (!releasable(claim, PVC_PROTECTION_FINALIZER)) return
    const namespace = claim.metadata.namespace ?? ''
    const inNamespace = await podStore.storage.list(podStore.prefix(namespace))
    if (inNamespace.items.some((pod) => podUsesClaim(pod, claim.metadata.name ?? ''))) return
    await release(persistentVolumeClaims, claim, PVC_PROTECTION_FINALIZER, PVC_PROTECTION_IDENTITY)
  }

  const checkVolume = async (volume: KubeObject): Promise<void> => {
    if (!releasable(volume, PV_PROTECTION_FINALIZER)) return
    if (field(field(volume, 'status'), 'phase') === 'Bound') return
    await release(persistentVolumes, volume, PV_PROTECTION_FINALIZER, PV_PROTECTION_IDENTITY)
  }

  // Claims being deleted, by namespace, so that a pod going away re-checks only its namespace's.
  const terminating = new Map<string, Map<string, KubeObject>>()
  const note = (claim: KubeObject, present: boolean): void => {
    const ns = claim.metadata.namespace ?? ''
    const claims = terminating.get(ns) ?? new Map<string, KubeObject>()
    if (present && releasable(claim, PVC_PROTECTION_FINALIZER)) claims.set(claim.metadata.name ?? '', claim)
    else claims.delete(claim.metadata.name ?? '')
    if (claims.size) terminating.set(ns, claims)
    else terminating.delete(ns)
  }
  const failed = (err: unknown): void => logger.warn({ err: String(err) }, 'storage protection check failed')

  const feeds = [
    feedObjects(claimStore.storage, claimStore.prefix(''), (event, claim) => {
      note(claim, event === 'upsert')
      if (event === 'upsert') checkClaim(claim).catch(failed)
    }, logger),
    feedObjects(podStore.storage, podStore.prefix(''), (_event, pod) => {
      for (const claim of terminating.get(pod.metadata.namespace ?? '')?.values() ?? []) checkClaim(claim).catch(failed)
    }, logger),
    feedObjects(volumeStore.storage, volumeStore.prefix(''), (event, volume) => {
      if (event === 'upsert') checkVolume(volume as KubeObject & Obj).catch(failed)
    }, logger),
  ]
  return { ready: Promise.all(feeds.map((f) => f.ready)).then(() => undefined), stop: () => feeds.forEach((f) => f.stop()) }
}
