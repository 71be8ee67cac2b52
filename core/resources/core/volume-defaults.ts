/**
 * The defaults of PersistentVolumes and PersistentVolumeClaims (upstream's
 * SetDefaults_PersistentVolume, SetDefaults_PersistentVolumeClaimSpec and
 * the defaults of the volume sources a volume may hold). A new object's
 * status is the Pending phase alone, as upstream returns it.
 */
import { isSet } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

type Obj = Record<string, unknown>

/** A plain string field is defaulted when empty too; a pointer field (`optional`) only when absent. */
function setDefault(obj: Obj, key: string, value: unknown, optional = false): void {
  if (!isSet(obj[key]) || (!optional && obj[key] === '')) obj[key] = value
}

/** Per source field, the defaults of its fields. */
const SOURCE_DEFAULTS: Record<string, Obj> = {
  iscsi: { iscsiInterface: 'default' },
  rbd: { pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' },
  scaleIO: { storageMode: 'ThinProvisioned', fsType: 'xfs' },
}

/** azureDisk's fields are pointers: an empty string given stays, to be refused. */
const AZURE_DISK_DEFAULTS: Obj = { cachingMode: 'ReadWrite', kind: 'Shared', fsType: 'ext4', readOnly: false }

export function applyPersistentVolumeDefaults(pv: KubeObject): void {
  const spec = isPlainObject(pv['spec']) ? pv['spec'] : (pv['spec'] = {})
  setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain')
  setDefault(spec, 'volumeMode', 'Filesystem', true)
  if (isPlainObject(spec['hostPath'])) setDefault(spec['hostPath'], 'type', '', true)
  for (const [key, defaults] of Object.entries(SOURCE_DEFAULTS)) {
    const source = spec[key]
    if (isPlainObject(source)) for (const [field, value] of Object.entries(defaults)) setDefault(source, field, value)
  }
  const azureDisk = spec['azureDisk']
  if (isPlainObject(azureDisk)) for (const [field, value] of Object.entries(AZURE_DISK_DEFAULTS)) setDefault(azureDisk, field, value, true)
}

export function applyPersistentVolumeClaimDefaults(pvc: KubeObject): void {
  const spec = isPlainObject(pvc['spec']) ? pvc['spec'] : (pvc['spec'] = {})
  setDefault(spec, 'volumeMode', 'Filesystem', true)
}

/** A created volume or claim starts Pending, whatever status it was sent with. */
export function pendingStatus(obj: KubeObject): void {
  obj['status'] = { phase: 'Pending' }
}
