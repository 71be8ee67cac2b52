/**
 * The rules of a PersistentVolume, worded as upstream's
 * ValidatePersistentVolume(Spec) and ValidatePersistentVolumeUpdate word
 * them: access modes, a positive storage capacity and nothing else, one
 * volume source (rules in persistent-volume-sources.ts), node affinity for
 * local volumes; once created, the source and volume mode stay, and node
 * affinity changes only from a beta topology label to its GA name.
 *
 * VolumeAttributesClass is a beta feature that 1.32 leaves off: as there,
 * `volumeAttributesClassName` is dropped from what a write sets (unless the
 * stored volume already has one) and is not validated.
 */
import { record, text } from '../columns/values.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { GoLiteral } from '../../machinery/go-format.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { cloneJson, isPlainObject, type KubeObject } from '../../machinery/object.js'
import { goResourceList, quantityOf, quantityString, scaledValue, ZERO } from './go-quantity.js'
import { hasInvalidLabelValue, validateNodeSelector } from './node-selector-validation.js'
import { mountOptionErrors, PV_SOURCE_KEYS, validatePVSources } from './persistent-volume-sources.js'
import { describeChanges } from './pod-spec-update.js'
import { semanticallyEqual } from './semantic-equal.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export const IMMUTABLE = 'field is immutable'
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod']
export const VOLUME_MODES = ['Block', 'Filesystem']
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain']

export const specOf = (obj: KubeObject): Obj => record(obj['spec'])

/** Each mode known, and ReadWriteOncePod alone when present. */
export function accessModeErrors(modes: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  let onePod = false
  let others = false
  for (const mode of Array.isArray(modes) ? modes : []) {
    if (!ACCESS_MODES.includes(text(mode))) errs.push(notSupported(path, mode, ACCESS_MODES))
    else if (mode === 'ReadWriteOncePod') onePod = true
    else others = true
  }
  if (onePod && others) errs.push(forbiddenField(path, 'may not use ReadWriteOncePod with other access modes'))
  return errs
}

/** Upstream's validateBasicResource and ValidatePositiveQuantityValue, for one quantity. */
export function positiveQuantityErrors(raw: unknown, path: FieldPath): FieldError[] {
  const q = quantityOf(raw)
  const errs: FieldError[] = []
  const value = scaledValue(q, 0)
  if (value < 0n) errs.push(invalid(path, new GoLiteral(String(value)), 'must be a valid resource quantity'))
  if (q.compare(ZERO) <= 0) errs.push(invalid(path, quantityString(raw), 'must be greater than zero'))
  return errs
}

function capacityErrors(capacity: unknown, path: FieldPath): FieldError[] {
  const entries = Object.entries(record(capacity))
  const errs: FieldError[] = []
  if (entries.length === 0) errs.push(required(path))
  if (!entries.some(([k]) => k === 'storage') || entries.length > 1) errs.push(notSupported(path, goResourceList(capacity), ['storage']))
  for (const [name, value] of entries) appendAll(errs, positiveQuantityErrors(value, path.key(name)))
  return errs
}

/** Go's path.Clean, enough to tell whether a path names the root. */
function namesRoot(p: string): boolean {
  if (!p.startsWith('/')) return false
  const depth = p.split('/').reduce((d, part) => (part === '..' ? Math.max(0, d - 1) : part === '' || part === '.' ? d : d + 1), 0)
  return depth === 0
}

interface VolumeOptions {
  /** Kept when the stored volume's required node affinity already holds such values. */
  allowInvalidLabelValueInRequiredNodeAffinity?: boolean
  /** Only when the stored volume already names a class: the feature is off at 1.32. */
  enableVolumeAttributesClass?: boolean
}

function validateSpec(spec: Obj, pvName: string, opts: VolumeOptions): FieldError[] {
  const path = fieldPath('spec')
  const errs: FieldError[] = []
  const modes = spec['accessModes']
  if (!Array.isArray(modes) || modes.length === 0) errs.push(required(path.child('accessModes')))
  appendAll(errs, accessModeErrors(modes, path.child('accessModes')))
  appendAll(errs, capacityErrors(spec['capacity'], path.child('capacity')))
  const policy = text(spec['persistentVolumeReclaimPolicy'])
  if (policy && !RECLAIM_POLICIES.includes(policy)) errs.push(notSupported(path.child('persistentVolumeReclaimPolicy'), policy, RECLAIM_POLICIES))
  const affinity = spec['nodeAffinity']
  if (isSet(affinity)) {
    const requiredTerms = record(affinity)['required']
    if (isSet(requiredTerms)) appendAll(errs, validateNodeSelector(record(requiredTerms), path.child('nodeAffinity').child('required'), opts.allowInvalidLabelValueInRequiredNodeAffinity ?? false))
    else errs.push(required(path.child('nodeAffinity').child('required'), 'must specify required node constraints'))
  }
  const sources = validatePVSources(spec, path, pvName)
  appendAll(errs, sources.errs)
  if (sources.local && !isSet(affinity)) errs.push(required(path.child('nodeAffinity'), 'Local volume requires node affinity'))
  if (sources.count === 0) errs.push(required(path, 'must specify a volume type'))
  if (isSet(spec['hostPath']) && namesRoot(text(record(spec['hostPath'])['path'])) && policy === 'Recycle')
    errs.push(forbiddenField(path.child('persistentVolumeReclaimPolicy'), "may not be 'recycle' for a hostPath mount of '/'"))
  const className = text(spec['storageClassName'])
  if (className) for (const msg of isDNS1123Subdomain(className)) errs.push(invalid(path.child('storageClassName'), className, msg))
  if (isSet(spec['volumeMode']) && !VOLUME_MODES.includes(text(spec['volumeMode'])))
    errs.push(notSupported(path.child('volumeMode'), spec['volumeMode'], VOLUME_MODES))
  const vac = spec['volumeAttributesClassName']
  if (opts.enableVolumeAttributesClass && isSet(vac)) {
    if (!text(vac)) errs.push(required(path.child('volumeAttributesClassName'), 'an empty string is disallowed'))
    else for (const msg of isDNS1123Subdomain(text(vac))) errs.push(invalid(path.child('volumeAttributesClassName'), text(vac), msg))
    if (!isSet(spec['csi'])) errs.push(required(path.child('csi'), 'has to be specified when using volumeAttributesClassName'))
  }
  return errs
}

function validate(pv: KubeObject, opts: VolumeOptions): FieldError[] {
  const spec = specOf(pv)
  return [...validateSpec(spec, pv.metadata.name ?? '', opts), ...mountOptionErrors(spec, pv.metadata.annotations)]
}

export function validatePersistentVolume(pv: KubeObject): FieldError[] {
  return validate(pv, {})
}

/** The beta topology labels a volume's node affinity may move to their GA names. */
const BETA_TO_GA_LABEL: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
}

/** `old` with each requirement key that `next` renamed from beta to GA taken as renamed. */
function withGALabels(old: unknown, next: unknown): unknown {
  const copy = cloneJson(old)
  const terms = (v: unknown): unknown[] => {
    const list = record(record(v)['required'])['nodeSelectorTerms']
    return Array.isArray(list) ? list : []
  }
  const newTerms = terms(next)
  terms(copy).forEach((term, i) => {
    for (const kind of ['matchExpressions', 'matchFields']) {
      const oldReqs = record(term)[kind]
      const newReqs = record(newTerms[i])[kind]
      if (!Array.isArray(oldReqs) || !Array.isArray(newReqs)) continue
      oldReqs.forEach((req, j) => {
        const [from, to] = [text(record(req)['key']), text(record(newReqs[j])['key'])]
        if (from !== to && BETA_TO_GA_LABEL[from] === to) record(req)['key'] = to
      })
    }
  })
  return copy
}

/** Go's `%#v` of the new node affinity; the pointer inside prints as an address upstream, shown here as `&{...}`. */
function goNodeAffinity(affinity: unknown): GoLiteral | null {
  if (!isSet(affinity)) return null
  const inner = isSet(record(affinity)['required']) ? '(*core.NodeSelector)(&{...})' : '(*core.NodeSelector)(nil)'
  return new GoLiteral(`core.VolumeNodeAffinity{Required:${inner}}`)
}

const sourceOf = (spec: Obj): Obj => Object.fromEntries(PV_SOURCE_KEYS.filter((k) => isSet(spec[k])).map((k) => [k, spec[k]]))

export function validatePersistentVolumeUpdate(pv: KubeObject, old: KubeObject): FieldError[] {
  const [spec, oldSpec] = [specOf(pv), specOf(old)]
  const oldRequired = record(record(oldSpec['nodeAffinity'])['required'])
  const errs = validate(pv, {
    allowInvalidLabelValueInRequiredNodeAffinity: hasInvalidLabelValue(oldRequired['nodeSelectorTerms']),
    enableVolumeAttributesClass: isSet(oldSpec['volumeAttributesClassName']),
  })
  const source = cloneJson(sourceOf(spec))
  const oldSource = sourceOf(oldSpec)
  // A CSI volume may gain the secret for controller expansion after creation.
  const [csi, oldCsi] = [record(source['csi']), record(oldSource['csi'])]
  if (isSet(oldSource['csi']) && !isSet(oldCsi['controllerExpandSecretRef']) && isSet(csi['controllerExpandSecretRef'])) delete csi['controllerExpandSecretRef']
  if (!semanticallyEqual(source, oldSource)) {
    const changes: string[] = []
    describeChanges(oldSource, source, 'spec', changes)
    const detail = ['spec.persistentvolumesource is immutable after creation', ...changes.map((l) => `  ${l}`)].join('\n')
    errs.push(forbiddenField(fieldPath('spec').child('persistentvolumesource'), detail))
  }
  if (!semanticallyEqual(spec['volumeMode'], oldSpec['volumeMode'])) errs.push(invalid(fieldPath('volumeMode'), spec['volumeMode'] ?? null, IMMUTABLE))
  // Node affinity may be set once; after that it changes only from beta labels to GA ones.
  if (isSet(oldSpec['nodeAffinity']) && !semanticallyEqual(spec['nodeAffinity'], withGALabels(oldSpec['nodeAffinity'], spec['nodeAffinity'])))
    errs.push(invalid(fieldPath('nodeAffinity'), goNodeAffinity(spec['nodeAffinity']), `${IMMUTABLE}, except for updating from beta label to GA`))
  if (!semanticallyEqual(spec['volumeAttributesClassName'], oldSpec['volumeAttributesClassName'])) {
    const vacPath = fieldPath('spec').child('volumeAttributesClassName')
    errs.push(forbiddenField(vacPath, 'update is forbidden when the VolumeAttributesClass feature gate is disabled'))
    if (isSet(oldSpec['volumeAttributesClassName']) && !isSet(spec['volumeAttributesClassName']))
      errs.push(forbiddenField(vacPath, 'update from non-nil value to nil is forbidden'))
  }
  return errs
}

/** Upstream's DropDisabledSpecFields with VolumeAttributesClass off: a class name only stays where the stored object has one. */
export function dropVolumeAttributesClass(obj: KubeObject, old?: KubeObject): void {
  const spec = obj['spec']
  if (!isPlainObject(spec)) return
  if (old && isSet(specOf(old)['volumeAttributesClassName'])) return
  delete spec['volumeAttributesClassName']
}
