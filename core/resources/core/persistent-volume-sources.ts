/**
 * The volume sources of a PersistentVolume, each checked as upstream's
 * ValidatePersistentVolumeSpec checks it (the PersistentVolume variants of
 * the source rules: secret references name a namespace, the iSCSI initiator
 * and target portal together fit in 64 characters, ...). A volume has
 * exactly one source; the first one set counts and every later one is
 * refused, in upstream's order of the fields.
 */
import { int, list, text } from '../columns/values.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required, tooLong } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/names.js'
import { isPlainObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const requireText = (src: Obj, key: string, path: FieldPath): FieldError[] => (text(src[key]) ? [] : [required(path.child(key))])

const PARTITION_MESSAGE = 'must be between 1 and 255, inclusive'
const LUN_MESSAGE = 'must be between 0 and 255, inclusive'
const MULTIPLE_SOURCES = 'may not specify more than 1 volume type'

/** Upstream's validatePathNoBacksteps: no `..` element. */
export function pathBackstepErrors(value: string, path: FieldPath): FieldError[] {
  return value.replace(/\\/g, '/').split('/').includes('..') ? [invalid(path, value, "must not contain '..'")] : []
}

function hostPath(src: Obj, path: FieldPath): FieldError[] {
  const p = text(src['path'])
  if (!p) return [required(path.child('path'))]
  const errs = pathBackstepErrors(p, path.child('path'))
  const types = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket']
  if (isSet(src['type']) && !types.includes(text(src['type']))) errs.push(notSupported(path.child('type'), src['type'], types))
  return errs
}

function partitioned(src: Obj, idKey: string, path: FieldPath): FieldError[] {
  const errs = requireText(src, idKey, path)
  const partition = int(src['partition'])
  if (partition < 0 || partition > 255) errs.push(invalid(path.child('partition'), partition, PARTITION_MESSAGE))
  return errs
}

/** A namespace name: a DNS-1123 label. */
const namespaceErrors = (ns: string, path: FieldPath): FieldError[] => isDNS1123Label(ns).map((msg) => invalid(path, ns, msg))

function glusterfs(src: Obj, path: FieldPath): FieldError[] {
  const errs = [...requireText(src, 'endpoints', path), ...requireText(src, 'path', path)]
  if (isSet(src['endpointsNamespace'])) {
    const ns = text(src['endpointsNamespace'])
    if (!ns) errs.push(invalid(path.child('endpointsNamespace'), ns, 'if the endpointnamespace is set, it must be a valid namespace name'))
    else appendAll(errs, namespaceErrors(ns, path.child('endpointsNamespace')))
  }
  return errs
}

function flocker(src: Obj, path: FieldPath): FieldError[] {
  const [name, uuid] = [text(src['datasetName']), text(src['datasetUUID'])]
  const errs: FieldError[] = []
  if (!name && !uuid) errs.push(required(path, 'one of datasetName and datasetUUID is required'))
  if (name && uuid) errs.push(invalid(path, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'))
  if (name.includes('/')) errs.push(invalid(path.child('datasetName'), name, "must not contain '/'"))
  return errs
}

function nfs(src: Obj, path: FieldPath): FieldError[] {
  const errs = [...requireText(src, 'server', path), ...requireText(src, 'path', path)]
  const p = text(src['path'])
  if (!p.startsWith('/')) errs.push(invalid(path.child('path'), p, 'must be an absolute path'))
  return errs
}

function rbd(src: Obj, path: FieldPath): FieldError[] {
  return [...(list(src['monitors']).length ? [] : [required(path.child('monitors'))]), ...requireText(src, 'image', path)]
}

/** Go's net.SplitHostPort succeeds: a host (bracketed when it holds colons) and a port after the last colon. */
function isHostPort(pair: string): boolean {
  const colon = pair.lastIndexOf(':')
  if (colon < 0) return false
  if (pair.startsWith('[')) {
    const end = pair.indexOf(']')
    return end > 0 && end + 1 === colon && !pair.slice(1).includes('[') && !pair.slice(end + 1).includes(']')
  }
  return !pair.slice(0, colon).includes(':') && !pair.includes('[') && !pair.includes(']')
}

function quobyte(src: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const registry = text(src['registry'])
  const hostPortMessage = 'must be a host:port pair or multiple pairs separated by commas'
  if (!registry) errs.push(required(path.child('registry'), hostPortMessage))
  else if (text(src['tenant']).length >= 65) errs.push(required(path.child('tenant'), 'must be a UUID and may not exceed a length of 64 characters'))
  else for (const pair of registry.split(',')) if (!isHostPort(pair)) errs.push(invalid(path.child('registry'), registry, hostPortMessage))
  appendAll(errs, requireText(src, 'volume', path))
  return errs
}

const monitors = (src: Obj, path: FieldPath): FieldError[] => (list(src['monitors']).length ? [] : [required(path.child('monitors'))])

// Unanchored at the start, as upstream's expression is.
const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$/
const EUI = /^eui.[A-Za-z0-9]{16}$/
const NAA = /^naa.[A-Za-z0-9]{32}$/

/** Whether an iSCSI name, already known to start with iqn, eui or naa, has that form's syntax. */
function iscsiNameFits(name: string): boolean {
  if (name.startsWith('iqn')) return IQN.test(name)
  if (name.startsWith('eui')) return EUI.test(name)
  return NAA.test(name)
}

const iscsiPrefixed = (name: string): boolean => ['iqn', 'eui', 'naa'].some((p) => name.startsWith(p))

function iscsi(src: Obj, path: FieldPath, pvName: string): FieldError[] {
  const errs = requireText(src, 'targetPortal', path)
  const portal = text(src['targetPortal'])
  if (isSet(src['initiatorName']) && `${pvName}:${portal}`.length > 64)
    errs.push(
      invalid(path.child('targetportal'), portal, 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'),
    )
  const iqn = text(src['iqn'])
  if (!iqn) errs.push(required(path.child('iqn')))
  else if (!iscsiPrefixed(iqn) || !iscsiNameFits(iqn)) errs.push(invalid(path.child('iqn'), iqn, 'must be valid format'))
  const lun = int(src['lun'])
  if (lun < 0 || lun > 255) errs.push(invalid(path.child('lun'), lun, LUN_MESSAGE))
  if ((src['chapAuthDiscovery'] === true || src['chapAuthSession'] === true) && !isSet(src['secretRef'])) errs.push(required(path.child('secretRef')))
  if (isPlainObject(src['secretRef']) && !text(src['secretRef']['name'])) errs.push(required(path.child('secretRef').child('name')))
  if (isSet(src['initiatorName'])) {
    const initiator = text(src['initiatorName'])
    // Two separate checks upstream: a wrong prefix, then the form of a right one.
    if (!iscsiPrefixed(initiator)) errs.push(invalid(path.child('initiatorname'), initiator, 'must be valid format'))
    else if (!iscsiNameFits(initiator)) errs.push(invalid(path.child('initiatorname'), initiator, 'must be valid format'))
  }
  return errs
}

/** A secret reference that must name both the secret and its namespace (the cinder and storageos form). */
function namespacedSecretRef(src: Obj, path: FieldPath): FieldError[] {
  const ref = src['secretRef']
  if (!isPlainObject(ref)) return []
  return [
    ...(text(ref['name']) ? [] : [required(path.child('secretRef').child('name'))]),
    ...(text(ref['namespace']) ? [] : [required(path.child('secretRef').child('namespace'))]),
  ]
}

function fc(src: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const wwns = list(src['targetWWNs']).map(text)
  const wwids = list(src['wwids'])
  if (wwns.length === 0 && wwids.length === 0) errs.push(required(path.child('targetWWNs'), 'must specify either targetWWNs or wwids, but not both'))
  if (wwns.length && wwids.length) errs.push(invalid(path.child('targetWWNs'), goStrings(wwns), 'targetWWNs and wwids can not be specified simultaneously'))
  if (wwns.length) {
    if (!isSet(src['lun'])) errs.push(required(path.child('lun'), 'lun is required if targetWWNs is specified'))
    else if (int(src['lun']) < 0 || int(src['lun']) > 255) errs.push(invalid(path.child('lun'), int(src['lun']), LUN_MESSAGE))
  }
  return errs
}

function flexVolume(src: Obj, path: FieldPath): FieldError[] {
  const errs = requireText(src, 'driver', path)
  for (const key of Object.keys(isPlainObject(src['options']) ? src['options'] : {})) {
    const domain = `.${(key.includes('/') ? key.slice(0, key.indexOf('/')) : key).toLowerCase()}`
    if (domain.endsWith('.kubernetes.io') || domain.endsWith('.k8s.io'))
      errs.push(invalid(path.child('options').key(key), key, 'kubernetes.io and k8s.io namespaces are reserved'))
  }
  return errs
}

function azureFile(src: Obj, path: FieldPath): FieldError[] {
  const errs = [...requireText(src, 'secretName', path), ...requireText(src, 'shareName', path)]
  if (isSet(src['secretNamespace']) && !text(src['secretNamespace'])) errs.push(required(path.child('secretNamespace')))
  return errs
}

function azureDisk(src: Obj, path: FieldPath): FieldError[] {
  const errs = [...requireText(src, 'diskName', path)]
  const uri = text(src['diskURI'])
  if (!uri) errs.push(required(path.child('diskURI')))
  const cachingModes = ['None', 'ReadOnly', 'ReadWrite']
  if (isSet(src['cachingMode']) && !cachingModes.includes(text(src['cachingMode'])))
    errs.push(notSupported(path.child('cachingMode'), src['cachingMode'], cachingModes))
  const kinds = ['Dedicated', 'Managed', 'Shared']
  const kind = src['kind']
  if (isSet(kind) && !kinds.includes(text(kind))) errs.push(notSupported(path.child('kind'), kind, kinds))
  if (kind === 'Managed' && !uri.startsWith('/subscriptions/'))
    errs.push(notSupported(path.child('diskURI'), uri, ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']))
  if (isSet(kind) && kind !== 'Managed' && !uri.startsWith('https://'))
    errs.push(notSupported(path.child('diskURI'), uri, ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']))
  return errs
}

function local(src: Obj, path: FieldPath): FieldError[] {
  const p = text(src['path'])
  return p ? pathBackstepErrors(p, path.child('path')) : [required(path.child('path'))]
}

function storageos(src: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const name = text(src['volumeName'])
  if (!name) errs.push(required(path.child('volumeName')))
  else appendAll(errs, isDNS1123Label(name).map((msg) => invalid(path.child('volumeName'), name, msg)))
  const ns = text(src['volumeNamespace'])
  if (ns) appendAll(errs, isDNS1123Label(ns).map((msg) => invalid(path.child('volumeNamespace'), ns, msg)))
  appendAll(errs, namespacedSecretRef(src, path))
  return errs
}

/** Upstream's ValidateCSIDriverName. */
function csiDriverErrors(driver: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (!driver) errs.push(required(path))
  if (driver.length > 63) errs.push(tooLong(path, 63))
  for (const msg of isDNS1123Subdomain(driver.toLowerCase())) errs.push(invalid(path, driver, msg))
  return errs
}

/** Upstream's validatePVSecretReference: a secret named by name and namespace. */
function pvSecretReference(ref: Obj, path: FieldPath): FieldError[] {
  const [name, ns] = [text(ref['name']), text(ref['namespace'])]
  return [
    ...(name ? isDNS1123Subdomain(name).map((msg) => invalid(path.child('name'), name, msg)) : [required(path.child('name'))]),
    ...(ns ? namespaceErrors(ns, path.child('namespace')) : [required(path.child('namespace'))]),
  ]
}

function csi(src: Obj, path: FieldPath): FieldError[] {
  const errs = [...csiDriverErrors(text(src['driver']), path.child('driver')), ...requireText(src, 'volumeHandle', path)]
  for (const key of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef']) {
    const ref = src[key]
    if (isPlainObject(ref)) appendAll(errs, pvSecretReference(ref, path.child(key)))
  }
  return errs
}

type SourceCheck = (src: Obj, path: FieldPath, pvName: string) => FieldError[]

/**
 * The sources in upstream's order: the field, the path its own errors are
 * reported under (gcePersistentDisk's as `persistentDisk`, cephfs's
 * refusal as `cephFS`), and its rules. A flexVolume is counted but never
 * refused as a second source, as upstream does.
 */
const SOURCES: { key: string; errorPath?: string; refusalPath?: string; check: SourceCheck; alwaysCounted?: true }[] = [
  { key: 'hostPath', check: hostPath },
  { key: 'gcePersistentDisk', errorPath: 'persistentDisk', check: (s, p) => partitioned(s, 'pdName', p) },
  { key: 'awsElasticBlockStore', check: (s, p) => partitioned(s, 'volumeID', p) },
  { key: 'glusterfs', check: glusterfs },
  { key: 'flocker', check: flocker },
  { key: 'nfs', check: nfs },
  { key: 'rbd', check: rbd },
  { key: 'quobyte', check: quobyte },
  { key: 'cephfs', refusalPath: 'cephFS', check: monitors },
  { key: 'iscsi', check: iscsi },
  { key: 'cinder', check: (s, p) => [...requireText(s, 'volumeID', p), ...namespacedSecretRef(s, p)] },
  { key: 'fc', check: fc },
  { key: 'flexVolume', check: flexVolume, alwaysCounted: true },
  { key: 'azureFile', check: azureFile },
  { key: 'vsphereVolume', check: (s, p) => requireText(s, 'volumePath', p) },
  { key: 'photonPersistentDisk', check: (s, p) => requireText(s, 'pdID', p) },
  { key: 'portworxVolume', check: (s, p) => requireText(s, 'volumeID', p) },
  { key: 'azureDisk', check: azureDisk },
  { key: 'scaleIO', check: (s, p) => ['gateway', 'system', 'volumeName'].flatMap((k) => requireText(s, k, p)) },
  { key: 'local', check: local },
  { key: 'storageos', check: storageos },
  { key: 'csi', check: csi },
]

/** The source fields of a PersistentVolumeSpec (its PersistentVolumeSource). */
export const PV_SOURCE_KEYS: readonly string[] = SOURCES.map((s) => s.key)

/**
 * The errors of the spec's sources and whether one was found. `local`
 * reports a local source, which needs node affinity.
 */
export function validatePVSources(spec: Obj, specPath: FieldPath, pvName: string): { errs: FieldError[]; count: number; local: boolean } {
  const errs: FieldError[] = []
  let count = 0
  let localFound = false
  for (const source of SOURCES) {
    const src = spec[source.key]
    if (!isSet(src)) continue
    if (count > 0 && !source.alwaysCounted) {
      errs.push(forbiddenField(specPath.child(source.refusalPath ?? source.key), MULTIPLE_SOURCES))
      continue
    }
    count++
    if (source.key === 'local') localFound = true
    appendAll(errs, source.check(isPlainObject(src) ? src : {}, specPath.child(source.errorPath ?? source.key), pvName))
  }
  return { errs, count, local: localFound }
}

/** Sources whose plugins take mount options: only these may carry the deprecated mount-options annotation. */
const MOUNT_OPTION_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
  'flocker',
  'scaleIO',
  'fc',
  'portworxVolume',
]

const MOUNT_OPTION_ANNOTATION = 'volume.beta.kubernetes.io/mount-options'

/** Upstream's volume-plugin check of a PersistentVolume (pkg/volume/validation). */
export function mountOptionErrors(spec: Obj, annotations: Record<string, string> | undefined): FieldError[] {
  if (MOUNT_OPTION_SOURCES.some((k) => isSet(spec[k]))) return []
  if (!annotations || !(MOUNT_OPTION_ANNOTATION in annotations)) return []
  const path = fieldPath('metadata').child('annotations').child(MOUNT_OPTION_ANNOTATION)
  return [forbiddenField(path, 'may not specify mount options for this volume type')]
}
