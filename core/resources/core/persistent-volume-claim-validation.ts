/**
 * The rules of a PersistentVolumeClaim, worded as upstream's
 * ValidatePersistentVolumeClaim(Spec), ValidatePersistentVolumeClaimUpdate
 * and ValidatePersistentVolumeClaimStatusUpdate word them: access modes, a
 * positive storage request, data sources; once created, the spec is fixed
 * but for a volume name set once, a storage class moved from its beta
 * annotation to the field, and — for a bound claim — the storage request.
 *
 * As at 1.32, RecoverVolumeExpansionFailure is on (a bound claim may shrink
 * back down to above its status capacity) and VolumeAttributesClass is off
 * (see persistent-volume-validation.ts).
 */
import { record, text } from '../columns/values.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { GoLiteral } from '../../machinery/go-format.js'
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../machinery/names.js'
import { cloneJson, isPlainObject, type KubeObject } from '../../machinery/object.js'
import { validateLabelSelector } from '../../validation/label-selector.js'
import { quantityOf, quantityString, scaledValue, ZERO } from './go-quantity.js'
import { accessModeErrors, IMMUTABLE, specOf, VOLUME_MODES } from './persistent-volume-validation.js'
import { describeChanges } from './pod-spec-update.js'
import { isNativeResource } from './resource-names.js'
import { semanticallyEqual } from './semantic-equal.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>


const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class'
const SPEC_IMMUTABLE = 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'

interface ClaimOptions {
  allowInvalidLabelValueInSelector?: boolean
  allowInvalidAPIGroupInDataSourceOrRef?: boolean
  /** Only when the stored claim already names a class: the feature is off at 1.32. */
  enableVolumeAttributesClass?: boolean
}

/**
 * Go's `%#v` of the field path upstream gives as the bad value of the
 * dataSource/dataSourceRef consistency errors; its parent pointer prints as
 * an address there, shown here as `&{...}`.
 */
const DATA_SOURCE_PATH = new GoLiteral('field.Path{name:"dataSource", index:"", parent:(*field.Path)(&{...})}')

function validateDataSource(ds: Obj, path: FieldPath, opts: ClaimOptions, withNamespace: boolean): FieldError[] {
  const errs: FieldError[] = []
  if (!text(ds['name'])) errs.push(required(path.child('name')))
  const kind = text(ds['kind'])
  if (!kind) errs.push(required(path.child('kind')))
  const group = text(ds['apiGroup'])
  if (!group && kind !== 'PersistentVolumeClaim') errs.push(invalid(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
  if (group && !opts.allowInvalidAPIGroupInDataSourceOrRef)
    for (const msg of isDNS1123Subdomain(group)) errs.push(invalid(path.child('apiGroup'), group, msg))
  const ns = text(ds['namespace'])
  if (withNamespace && ns) for (const msg of isDNS1123Label(ns)) errs.push(invalid(path.child('namespace'), ns, msg))
  return errs
}

function validateClaimSpec(spec: Obj, opts: ClaimOptions): FieldError[] {
  const path = fieldPath('spec')
  const errs: FieldError[] = []
  const modes = spec['accessModes']
  if (!Array.isArray(modes) || modes.length === 0) errs.push(required(path.child('accessModes'), 'at least 1 access mode is required'))
  if (isSet(spec['selector']))
    appendAll(errs, validateLabelSelector(spec['selector'], path.child('selector'), { allowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector ?? false }))
  appendAll(errs, accessModeErrors(modes, path.child('accessModes')))
  const requests = record(record(spec['resources'])['requests'])
  const storagePath = path.child('resources').key('storage')
  if (!('storage' in requests)) errs.push(required(storagePath))
  else if (quantityOf(requests['storage']).compare(ZERO) <= 0) errs.push(invalid(storagePath, quantityString(requests['storage']), 'must be greater than zero'))
  const className = text(spec['storageClassName'])
  if (className) for (const msg of isDNS1123Subdomain(className)) errs.push(invalid(path.child('storageClassName'), className, msg))
  if (isSet(spec['volumeMode']) && !VOLUME_MODES.includes(text(spec['volumeMode'])))
    errs.push(notSupported(path.child('volumeMode'), spec['volumeMode'], VOLUME_MODES))
  const [source, ref] = [spec['dataSource'], spec['dataSourceRef']]
  if (isPlainObject(source)) appendAll(errs, validateDataSource(source, path.child('dataSource'), opts, false))
  if (isPlainObject(ref)) appendAll(errs, validateDataSource(ref, path.child('dataSourceRef'), opts, true))
  if (isPlainObject(ref) && text(ref['namespace'])) {
    if (isSet(source)) errs.push(invalid(path, DATA_SOURCE_PATH, 'may not be specified when dataSourceRef.namespace is specified'))
  } else if (isPlainObject(source) && isPlainObject(ref)) {
    const same = ['apiGroup', 'kind', 'name'].every((k) => (source[k] ?? null) === (ref[k] ?? null))
    if (!same) errs.push(invalid(path, DATA_SOURCE_PATH, 'must match dataSourceRef'))
  }
  const vac = spec['volumeAttributesClassName']
  if (opts.enableVolumeAttributesClass && text(vac))
    for (const msg of isDNS1123Subdomain(text(vac))) errs.push(invalid(path.child('volumeAttributesClassName'), text(vac), msg))
  return errs
}

export function validatePersistentVolumeClaim(pvc: KubeObject): FieldError[] {
  return validateClaimSpec(specOf(pvc), {})
}

/** Upstream's ValidationOptionsForPersistentVolumeClaim: what the stored claim already holds stays acceptable. */
function optionsFrom(old: KubeObject): ClaimOptions {
  const spec = specOf(old)
  const selector = spec['selector']
  return {
    allowInvalidLabelValueInSelector: isSet(selector) && validateLabelSelector(selector, fieldPath('spec').child('selector')).length > 0,
    allowInvalidAPIGroupInDataSourceOrRef: isSet(record(spec['dataSource'])['apiGroup']) || isSet(record(spec['dataSourceRef'])['apiGroup']),
    enableVolumeAttributesClass: isSet(spec['volumeAttributesClassName']),
  }
}

const annotationsOf = (obj: KubeObject): Record<string, string> => obj.metadata.annotations ?? {}

/** A claim whose class was given by the beta annotation may move it to the field, unchanged. */
function movesClassFromAnnotation(pvc: KubeObject, old: KubeObject): boolean {
  const [annotations, oldAnnotations] = [annotationsOf(pvc), annotationsOf(old)]
  const [name, oldName] = [specOf(pvc)['storageClassName'], specOf(old)['storageClassName']]
  if (!(BETA_STORAGE_CLASS in oldAnnotations) || isSet(oldName) || !isSet(name)) return false
  const oldClass = oldAnnotations[BETA_STORAGE_CLASS]
  return name === oldClass && (!(BETA_STORAGE_CLASS in annotations) || annotations[BETA_STORAGE_CLASS] === oldClass)
}

/** A claim without a class may be given one (matching its beta annotation, if it has that). */
function setsClassFromNothing(pvc: KubeObject, old: KubeObject): boolean {
  const oldAnnotations = annotationsOf(old)
  const [name, oldName] = [specOf(pvc)['storageClassName'], specOf(old)['storageClassName']]
  return isSet(name) && !isSet(oldName) && (!(BETA_STORAGE_CLASS in oldAnnotations) || name === oldAnnotations[BETA_STORAGE_CLASS])
}

const storageRequest = (spec: Obj): unknown => record(record(spec['resources'])['requests'])['storage']

/** What of the spec an update may change, folded back to the stored values; anything left over differs. */
function comparableSpecs(pvc: KubeObject, old: KubeObject, errs: FieldError[]): [Obj, Obj] {
  const next = cloneJson(specOf(pvc))
  const prev = cloneJson(specOf(old))
  // The binder sets the volume name once.
  if (!text(prev['volumeName'])) {
    if (isSet(next['volumeName'])) prev['volumeName'] = next['volumeName']
    else delete prev['volumeName']
  }
  if (movesClassFromAnnotation(pvc, old)) delete next['storageClassName']
  else {
    const [value, oldValue] = [annotationsOf(pvc)[BETA_STORAGE_CLASS] ?? '', annotationsOf(old)[BETA_STORAGE_CLASS] ?? '']
    if (value !== oldValue) errs.push(invalid(fieldPath('metadata').child('annotations').child(BETA_STORAGE_CLASS), value, IMMUTABLE))
    if (setsClassFromNothing(pvc, old)) delete next['storageClassName']
  }
  if (text(record(pvc['status'])['phase']) === 'Bound') {
    const requests = record(next['resources'])['requests']
    if (isPlainObject(requests)) {
      const oldStorage = storageRequest(prev)
      if (oldStorage === undefined) delete requests['storage']
      else requests['storage'] = oldStorage
    }
    if (isSet(next['volumeAttributesClassName'])) {
      if (isSet(prev['volumeAttributesClassName'])) next['volumeAttributesClassName'] = prev['volumeAttributesClassName']
      else delete next['volumeAttributesClassName']
    }
  }
  return [next, prev]
}

export function validatePersistentVolumeClaimUpdate(pvc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateClaimSpec(specOf(pvc), optionsFrom(old))
  const [next, prev] = comparableSpecs(pvc, old, errs)
  if (!semanticallyEqual(next, prev)) {
    const changes: string[] = []
    describeChanges(prev, next, 'spec', changes)
    errs.push(forbiddenField(fieldPath('spec'), [SPEC_IMMUTABLE, ...changes.map((l) => `  ${l}`)].join('\n')))
  }
  const [size, oldSize] = [quantityOf(storageRequest(specOf(pvc))), quantityOf(storageRequest(specOf(old)))]
  // A claim may shrink back after a failed expansion, but never to its current capacity or below.
  const capacity = quantityOf(record(record(old['status'])['capacity'])['storage'])
  if (size.compare(oldSize) < 0 && size.compare(capacity) <= 0)
    errs.push(forbiddenField(fieldPath('spec').child('resources').child('requests').child('storage'), 'field can not be less than status.capacity'))
  const [mode, oldMode] = [specOf(pvc)['volumeMode'], specOf(old)['volumeMode']]
  if (!semanticallyEqual(mode, oldMode)) errs.push(invalid(fieldPath('volumeMode'), mode ?? null, IMMUTABLE))
  const [vac, oldVac] = [specOf(pvc)['volumeAttributesClassName'], specOf(old)['volumeAttributesClassName']]
  if (!semanticallyEqual(vac, oldVac)) {
    const vacPath = fieldPath('spec').child('volumeAttributesClassName')
    errs.push(forbiddenField(vacPath, 'update is forbidden when the VolumeAttributesClass feature gate is disabled'))
    if (isSet(oldVac) && !isSet(vac)) errs.push(forbiddenField(vacPath, 'update from non-nil value to nil is forbidden'))
    else if (isSet(oldVac) && vac === '') errs.push(forbiddenField(vacPath, 'update from non-nil value to an empty string is forbidden'))
  }
  return errs
}

const RESIZE_STATUSES = ['ControllerResizeInProgress', 'ControllerResizeInfeasible', 'NodeResizeInProgress', 'NodeResizeInfeasible', 'NodeResizePending']

/** Upstream's validatePersistentVolumeClaimResourceKey: a qualified name, and `storage` if a native one. */
function claimResourceKeyErrors(key: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(key).map((msg) => invalid(path, key, msg))
  if (errs.length) return errs
  return isNativeResource(key) && key !== 'storage' ? [notSupported(path, key, ['storage'])] : []
}

const basicResourceErrors = (raw: unknown, path: FieldPath): FieldError[] => {
  const value = scaledValue(quantityOf(raw), 0)
  return value < 0n ? [invalid(path, new GoLiteral(String(value)), 'must be a valid resource quantity')] : []
}

/** Through `status`: the spec is the stored one; the capacity and the resize bookkeeping are checked. */
export function validatePersistentVolumeClaimStatusUpdate(pvc: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const modes = specOf(pvc)['accessModes']
  if (!Array.isArray(modes) || modes.length === 0) errs.push(required(fieldPath('Spec').child('accessModes')))
  const status = record(pvc['status'])
  for (const [name, value] of Object.entries(record(status['capacity'])))
    appendAll(errs, basicResourceErrors(value, fieldPath('status').child('capacity').key(name)))
  const resizePath = fieldPath('status').child('allocatedResourceStatus')
  for (const [name, value] of Object.entries(record(status['allocatedResourceStatuses']))) {
    appendAll(errs, claimResourceKeyErrors(name, resizePath))
    // Upstream names the resource, not the status, as the unsupported value.
    if (!RESIZE_STATUSES.includes(text(value))) errs.push(notSupported(resizePath, new GoLiteral(name), RESIZE_STATUSES))
  }
  const allocatedPath = fieldPath('status').child('allocatedResources')
  for (const [name, value] of Object.entries(record(status['allocatedResources']))) {
    const keyErrs = claimResourceKeyErrors(name, allocatedPath)
    appendAll(errs, (keyErrs.length ? keyErrs : basicResourceErrors(value, allocatedPath.key(name))))
  }
  return errs
}

/**
 * Upstream's PrepareForCreate/PrepareForUpdate of a claim's spec at 1.32:
 * fields of features that are off go (a volume attributes class, a data
 * source in another namespace) unless the stored claim has them, and the
 * two data source fields are made to agree (one given fills the other).
 */
export function prepareClaimSpec(pvc: KubeObject, old?: KubeObject): void {
  const spec = pvc['spec']
  if (!isPlainObject(spec)) return
  const oldSpec = old ? specOf(old) : {}
  if (!isSet(oldSpec['volumeAttributesClassName'])) delete spec['volumeAttributesClassName']
  const ref = spec['dataSourceRef']
  if (isPlainObject(ref) && !text(record(oldSpec['dataSourceRef'])['namespace'])) delete ref['namespace']
  const source = spec['dataSource']
  const pick = (from: Obj): Obj => Object.fromEntries(['apiGroup', 'kind', 'name'].filter((k) => isSet(from[k])).map((k) => [k, from[k]]))
  if (isPlainObject(source) && !isSet(ref)) spec['dataSourceRef'] = pick(source)
  else if (isPlainObject(ref) && !isSet(source) && !text(ref['namespace'])) spec['dataSource'] = pick(ref)
}
