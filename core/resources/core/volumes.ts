/** PersistentVolumes and the claims that bind them. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { at, list, quantity, text } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import {
  prepareClaimSpec,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimStatusUpdate,
  validatePersistentVolumeClaimUpdate,
} from './persistent-volume-claim-validation.js'
import { dropVolumeAttributesClass, validatePersistentVolume, validatePersistentVolumeUpdate } from './persistent-volume-validation.js'
import { applyPersistentVolumeClaimDefaults, applyPersistentVolumeDefaults, pendingStatus } from './volume-defaults.js'

/** `RWO,ROX,RWX,RWOP` in that order, as upstream's GetAccessModesAsString. */
function accessModes(modes: unknown): string {
  const present = new Set(list(modes).map(text))
  const order: [string, string][] = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ]
  return order
    .filter(([mode]) => present.has(mode))
    .map(([, short]) => short)
    .join(',')
}

/** The storage class: the beta annotation first, as upstream still honours it, then the field. */
function storageClass(obj: KubeObject): string {
  return obj.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? text(at(obj, 'spec', 'storageClassName'))
}

function phase(obj: KubeObject): string {
  return obj.metadata.deletionTimestamp ? 'Terminating' : text(at(obj, 'status', 'phase'))
}

function volumeMode(obj: KubeObject): string {
  return text(at(obj, 'spec', 'volumeMode')) || '<unset>'
}

function volumeAttributesClass(obj: KubeObject): string {
  return text(at(obj, 'spec', 'volumeAttributesClassName')) || '<unset>'
}

export const persistentVolumes: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  resource: 'persistentvolumes',
  namespaced: false,
  shortNames: ['pv'],
  // Through status, only the metadata rules apply (upstream's ValidatePersistentVolumeStatusUpdate).
  subresources: [{ ...statusSubresource('PersistentVolume'), validateUpdate: () => [] }],
  strategy: {
    applyDefaults: applyPersistentVolumeDefaults,
    prepareForCreate: (pv) => {
      pendingStatus(pv)
      dropVolumeAttributesClass(pv)
    },
    prepareForUpdate: (pv, old) => dropVolumeAttributesClass(pv, old),
    validate: validatePersistentVolume,
    validateUpdate: validatePersistentVolumeUpdate,
  },
  columns: [
    nameColumn,
    column('Capacity', 'The storage capacity.', (pv) => quantity(at(pv, 'spec', 'capacity', 'storage'))),
    column('Access Modes', 'How the volume can be mounted.', (pv) => accessModes(at(pv, 'spec', 'accessModes'))),
    column('Reclaim Policy', 'What happens once released.', (pv) => text(at(pv, 'spec', 'persistentVolumeReclaimPolicy'))),
    column('Status', 'The phase of the volume.', phase),
    column('Claim', 'The claim bound to the volume.', (pv) => {
      const ref = at(pv, 'spec', 'claimRef')
      return ref === undefined ? '' : `${text(at(ref, 'namespace'))}/${text(at(ref, 'name'))}`
    }),
    column('StorageClass', 'The storage class of the volume.', storageClass),
    column('VolumeAttributesClass', 'The volume attributes class of the volume.', volumeAttributesClass),
    column('Reason', 'Why the volume is in its phase.', (pv) => text(at(pv, 'status', 'reason'))),
    ageColumn,
    wideColumn('VolumeMode', 'Filesystem or block.', volumeMode),
  ],
})

export const persistentVolumeClaims: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  resource: 'persistentvolumeclaims',
  namespaced: true,
  shortNames: ['pvc'],
  subresources: [{ ...statusSubresource('PersistentVolumeClaim'), validateUpdate: validatePersistentVolumeClaimStatusUpdate }],
  strategy: {
    applyDefaults: applyPersistentVolumeClaimDefaults,
    prepareForCreate: (pvc) => {
      pendingStatus(pvc)
      prepareClaimSpec(pvc)
    },
    prepareForUpdate: (pvc, old) => prepareClaimSpec(pvc, old),
    validate: validatePersistentVolumeClaim,
    validateUpdate: validatePersistentVolumeClaimUpdate,
  },
  columns: [
    nameColumn,
    column('Status', 'The phase of the claim.', phase),
    column('Volume', 'The volume bound to the claim.', (pvc) => text(at(pvc, 'spec', 'volumeName'))),
    column('Capacity', 'The capacity of the bound volume.', (pvc) =>
      text(at(pvc, 'spec', 'volumeName')) ? quantity(at(pvc, 'status', 'capacity', 'storage')) : '',
    ),
    column('Access Modes', 'How the bound volume can be mounted.', (pvc) =>
      text(at(pvc, 'spec', 'volumeName')) ? accessModes(at(pvc, 'status', 'accessModes')) : '',
    ),
    column('StorageClass', 'The storage class of the claim.', storageClass),
    column('VolumeAttributesClass', 'The volume attributes class of the claim.', volumeAttributesClass),
    ageColumn,
    wideColumn('VolumeMode', 'Filesystem or block.', volumeMode),
  ],
})
