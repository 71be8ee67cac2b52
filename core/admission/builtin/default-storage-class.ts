/**
 * DefaultStorageClass (upstream: plugin/pkg/admission/storage/storageclass/setdefault):
 * a claim created without a class gets the cluster's default StorageClass,
 * the newest when several are marked default; without a default it is left
 * as it is.
 */
import { persistentVolumeClaims } from '../../resources/core/volumes.js'
import type { MutatingAdmission } from '../mutating.js'
import { isResource } from './forbidden.js'
import { claimHasClass, isDefaultStorageClass, newestDefault } from './storage-classes.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import { storageClasses } from '../../resources/groups/storage.js'
import { withInformer } from '../informer-plugin.js'

export function defaultStorageClass(storageClasses: () => readonly KubeObject[]): MutatingAdmission {
  return {
    name: 'DefaultStorageClass',
    handles: (operation) => operation === 'CREATE',
    admit(a) {
      const claim = a.object
      if (!claim || !isResource(a, persistentVolumeClaims.group, persistentVolumeClaims.resource) || claimHasClass(claim)) return
      const chosen = newestDefault(storageClasses(), isDefaultStorageClass)
      if (!chosen) return
      const spec = (claim['spec'] ??= {}) as Record<string, unknown>
      spec['storageClassName'] = chosen.metadata.name
    },
  }
}

/** Reads the StorageClasses from a watch-fed index. */
export const defaultStorageClassFactory: AdmissionPluginFactory = ({ informers }) =>
  withInformer(informers, storageClasses, (classes) => defaultStorageClass(() => classes.list()), [persistentVolumeClaims])
