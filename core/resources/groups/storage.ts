/**
 * storage.k8s.io/v1: storage and volume attributes classes, CSI drivers and
 * nodes, attachments, capacities. CSI drivers, CSI nodes, capacities and
 * attachments are updated only with the resourceVersion they were read at,
 * as upstream's strategies ask. The rules of each kind are in storage/.
 */
import { RESET_OBJECT_META_FOR_STATUS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, list, quantity, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { applyCSIDriverDefaults, validateCSIDriver, validateCSIDriverUpdate } from '../storage/csi-driver-rules.js'
import { validateCSINode, validateCSINodeUpdate } from '../storage/csi-node-rules.js'
import { applyStorageClassDefaults, validateStorageClass, validateStorageClassUpdate } from '../storage/storage-class-rules.js'
import { prepareVolumeAttachmentForCreate, validateVolumeAttachment, validateVolumeAttachmentUpdate } from '../storage/volume-attachment-rules.js'

const GROUP = 'storage.k8s.io'

/** Upstream's strategies of these kinds refuse an update without a resourceVersion. */
const conditionalUpdates = { allowUnconditionalUpdate: false }

/** A boolean field, or what upstream's printer assumes when it is unset. */
function flag(obj: KubeObject, fallback: boolean, ...path: string[]): boolean {
  const v = at(obj, ...path)
  return typeof v === 'boolean' ? v : fallback
}

function isDefaultClass(obj: KubeObject, ...annotations: string[]): boolean {
  return annotations.some((a) => obj.metadata.annotations?.[a] === 'true')
}

export const storageClasses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'StorageClass',
  resource: 'storageclasses',
  namespaced: false,
  shortNames: ['sc'],
  strategy: { applyDefaults: applyStorageClassDefaults, validate: validateStorageClass, validateUpdate: validateStorageClassUpdate },
  columns: [
    {
      ...nameColumn,
      cell: (sc) =>
        `${sc.metadata.name ?? ''}${isDefaultClass(sc, 'storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class') ? ' (default)' : ''}`,
    },
    column('Provisioner', 'The volume plugin that provisions its volumes.', textAt('provisioner')),
    column('ReclaimPolicy', 'What happens to released volumes.', (sc) => text(sc['reclaimPolicy']) || 'Delete'),
    column('VolumeBindingMode', 'When volumes are bound.', (sc) => text(sc['volumeBindingMode']) || 'Immediate'),
    column('AllowVolumeExpansion', 'Whether its volumes may grow.', (sc) => flag(sc, false, 'allowVolumeExpansion')),
    ageColumn,
  ],
})

export const volumeAttributesClasses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'VolumeAttributesClass',
  resource: 'volumeattributesclasses',
  singular: 'volumeattributesclass',
  namespaced: false,
  shortNames: ['vac'],
  columns: [
    {
      ...nameColumn,
      cell: (vac) =>
        `${vac.metadata.name ?? ''}${isDefaultClass(vac, 'volumeattributesclass.kubernetes.io/is-default-class', 'volumeattributesclass.alpha.kubernetes.io/is-default-class') ? ' (default)' : ''}`,
    },
    column('DriverName', 'The CSI driver of the class.', textAt('driverName')),
    ageColumn,
  ],
})

export const volumeAttachments: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'VolumeAttachment',
  resource: 'volumeattachments',
  namespaced: false,
  strategy: {
    ...conditionalUpdates,
    prepareForCreate: prepareVolumeAttachmentForCreate,
    validate: validateVolumeAttachment,
    validateUpdate: validateVolumeAttachmentUpdate,
  },
  // Its status strategy calls ResetObjectMetaForStatus.
  subresources: [statusSubresource('VolumeAttachment', RESET_OBJECT_META_FOR_STATUS)],
  columns: [
    nameColumn,
    column('Attacher', 'The driver that attaches the volume.', textAt('spec', 'attacher'), { format: 'name' }),
    column('PV', 'The persistent volume attached.', textAt('spec', 'source', 'persistentVolumeName')),
    column('Node', 'The node it is attached to.', textAt('spec', 'nodeName')),
    column('Attached', 'Whether the attachment is done.', (va) => at(va, 'status', 'attached') === true, { type: 'boolean' }),
    ageColumn,
  ],
})

export const csiDrivers: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'CSIDriver',
  resource: 'csidrivers',
  namespaced: false,
  strategy: { ...conditionalUpdates, applyDefaults: applyCSIDriverDefaults, validate: validateCSIDriver, validateUpdate: validateCSIDriverUpdate },
  columns: [
    nameColumn,
    column('AttachRequired', 'Whether volumes need attaching.', (d) => flag(d, true, 'spec', 'attachRequired'), { type: 'boolean' }),
    column('PodInfoOnMount', 'Whether mounts get pod information.', (d) => flag(d, false, 'spec', 'podInfoOnMount'), { type: 'boolean' }),
    column('StorageCapacity', 'Whether capacity is tracked.', (d) => flag(d, false, 'spec', 'storageCapacity'), { type: 'boolean' }),
    column('TokenRequests', 'Audiences of the tokens it gets.', (d) => {
      const requests = at(d, 'spec', 'tokenRequests')
      return requests === undefined ? '<unset>' : list(requests).map((r) => text(at(r, 'audience'))).join(',')
    }),
    column('RequiresRepublish', 'Whether volumes are republished.', (d) => flag(d, false, 'spec', 'requiresRepublish'), { type: 'boolean' }),
    column('Modes', 'The volume lifecycle modes.', (d) => list(at(d, 'spec', 'volumeLifecycleModes')).map(text).join(',') || '<none>'),
    ageColumn,
  ],
})

export const csiNodes: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'CSINode',
  resource: 'csinodes',
  namespaced: false,
  strategy: { ...conditionalUpdates, validate: validateCSINode, validateUpdate: validateCSINodeUpdate },
  columns: [
    nameColumn,
    column('Drivers', 'How many CSI drivers the node has.', (n) => list(at(n, 'spec', 'drivers')).length, { type: 'integer' }),
    ageColumn,
  ],
})

export const csiStorageCapacities: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'CSIStorageCapacity',
  resource: 'csistoragecapacities',
  singular: 'csistoragecapacity',
  namespaced: true,
  strategy: conditionalUpdates,
  columns: [
    nameColumn,
    column('StorageClassName', 'The storage class it reports on.', textAt('storageClassName')),
    column('Capacity', 'The capacity available.', (c) => (c['capacity'] === undefined ? '<unset>' : quantity(c['capacity']))),
  ],
})

export const storageEntries: ResourceEntry[] = [
  csiDrivers,
  csiNodes,
  csiStorageCapacities,
  storageClasses,
  volumeAttachments,
  volumeAttributesClasses,
]
