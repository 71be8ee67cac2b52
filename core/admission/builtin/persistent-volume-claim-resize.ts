/**
 * PersistentVolumeClaimResize (upstream: plugin/pkg/admission/storage/persistentvolume/resize):
 * a claim's storage request may grow only once it is bound, and only when
 * its class (unchanged) exists and sets `allowVolumeExpansion: true`.
 * Shrinking is the strategy's concern, not this plugin's.
 */
import { parseQuantity } from '../../cel/library/quantity.js'
import { persistentVolumeClaims } from '../../resources/core/volumes.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { claimClass, specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import { storageClasses } from '../../resources/groups/storage.js'
import { withInformer } from '../informer-plugin.js'

function requestedStorage(claim: KubeObject | undefined): string | undefined {
  const resources = specOf(claim)['resources']
  const requests = isPlainObject(resources) ? resources['requests'] : undefined
  const storage = isPlainObject(requests) ? requests['storage'] : undefined
  return typeof storage === 'string' ? storage : typeof storage === 'number' ? String(storage) : undefined
}

/** Whether `now` asks for more than `before` (a missing request counts as zero). */
function grows(before: string | undefined, now: string | undefined): boolean {
  const next = parseQuantity(now ?? '0')
  const previous = parseQuantity(before ?? '0')
  return next !== undefined && previous !== undefined && next.compare(previous) > 0
}

const phaseOf = (claim: KubeObject | undefined): unknown => (claim && isPlainObject(claim['status']) ? claim['status']['phase'] : undefined)

export function persistentVolumeClaimResize(storageClass: (name: string) => KubeObject | undefined): ValidatingAdmission {
  const expandable = (claim: KubeObject, old: KubeObject): boolean => {
    const [name, oldName] = [claimClass(claim), claimClass(old)]
    if (!name || name !== oldName) return false
    return storageClass(name)?.['allowVolumeExpansion'] === true
  }
  return {
    name: 'PersistentVolumeClaimResize',
    handles: (operation) => operation === 'UPDATE',
    validate(a) {
      // The resource before the objects: reading them makes the validating step's copies.
      if (!isResource(a, persistentVolumeClaims.group, persistentVolumeClaims.resource)) return
      const [claim, old] = [a.object, a.oldObject]
      if (!claim || !old) return
      if (!grows(requestedStorage(old), requestedStorage(claim))) return
      if (phaseOf(old) !== 'Bound') throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded')
      if (!expandable(claim, old))
        throw admissionForbidden(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize')
    },
  }
}

/** Reads the StorageClasses from a watch-fed index. */
export const persistentVolumeClaimResizeFactory: AdmissionPluginFactory = ({ informers }) =>
  withInformer(informers, storageClasses, (classes) => persistentVolumeClaimResize((name) => classes.get('', name)), [persistentVolumeClaims])
