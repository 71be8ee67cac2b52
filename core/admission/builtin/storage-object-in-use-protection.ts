/**
 * StorageObjectInUseProtection (upstream: plugin/pkg/admission/storage/storageobjectinuseprotection):
 * every new PersistentVolume and PersistentVolumeClaim carries the
 * protection finalizer, so that one in use is not removed until the
 * protection controllers (run in-process with the plugin,
 * core/controllers/storage-protection.ts) let it go.
 */
import { persistentVolumeClaims, persistentVolumes } from '../../resources/core/volumes.js'
import type { MutatingAdmission } from '../mutating.js'
import { isResource } from './forbidden.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER, startStorageProtection } from '../../controllers/storage-protection.js'
import { startOnDemand } from '../../controllers/on-demand.js'
import type { KubeObject } from '../../machinery/object.js'


export const storageObjectInUseProtection: MutatingAdmission = {
  name: 'StorageObjectInUseProtection',
  handles: (operation) => operation === 'CREATE',
  admit(a) {
    const obj = a.object
    if (!obj) return
    const finalizer = isResource(a, persistentVolumes.group, persistentVolumes.resource)
      ? PV_PROTECTION_FINALIZER
      : isResource(a, persistentVolumeClaims.group, persistentVolumeClaims.resource)
        ? PVC_PROTECTION_FINALIZER
        : undefined
    if (!finalizer) return
    const finalizers = obj.metadata.finalizers ?? []
    if (!finalizers.includes(finalizer)) obj.metadata.finalizers = [...finalizers, finalizer]
  },
}

/** The plugin with the controllers that remove its finalizers once nothing uses the object. */
export const storageObjectInUseProtectionFactory: AdmissionPluginFactory = (context) => {
  // The controllers start at the first object carrying a protection finalizer: until a claim or a volume is stored,
  // they have nothing to release, and a server that stores neither (most tests') follows no pods, claims and volumes.
  const onDemand = {
    what: 'storage protection controllers',
    concerns: carriesProtectionFinalizer,
    start: () => startStorageProtection(context),
  }
  const start = (): (() => void) => startOnDemand(context.observeStoredObjects, context.logger, onDemand)
  // The controllers run once in a cluster (upstream's controller manager); the plugin in every server.
  if (context.runOnce) {
    context.runOnce('storage-protection', async () => start())
    return { plugin: storageObjectInUseProtection }
  }
  return { plugin: storageObjectInUseProtection, stop: start() }
}

const carriesProtectionFinalizer = (object: KubeObject): boolean =>
  object.metadata.finalizers?.some((f) => f === PVC_PROTECTION_FINALIZER || f === PV_PROTECTION_FINALIZER) ?? false
