/**
 * The rules of a StorageClass (upstream's ValidateStorageClass and
 * ValidateStorageClassUpdate, with storage/v1's defaults): a provisioner
 * named as a qualified name, parameters of bounded count and size, a
 * reclaim policy of Delete or Retain, a binding mode of Immediate or
 * WaitForFirstConsumer, and valid allowed topologies. Volumes already
 * provisioned from a class rely on it: its provisioner, parameters, reclaim
 * policy and binding mode stay as created.
 */
import { utf8Length } from '../../machinery/utf8-length.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, notSupported, required, tooLong } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { immutableField, semanticEqual } from '../apps/selector.js'
import { record, text } from '../columns/values.js'
import { validateAllowedTopologies } from './topology-rules.js'
import { appendAll } from '../../machinery/append-all.js'

const MAX_PARAMETERS = 512
const MAX_PARAMETERS_BYTES = 256 * 1024
/** Sorted, as upstream lists a string set. */
const RECLAIM_POLICIES = ['Delete', 'Retain']
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer']

const DEFAULT_RECLAIM_POLICY = 'Delete'
const DEFAULT_BINDING_MODE = 'Immediate'

/** storage/v1 defaults: released volumes are deleted, and volumes are bound at once. */
export function applyStorageClassDefaults(sc: KubeObject): void {
  if (sc['reclaimPolicy'] === undefined || sc['reclaimPolicy'] === null) sc['reclaimPolicy'] = DEFAULT_RECLAIM_POLICY
  if (sc['volumeBindingMode'] === undefined || sc['volumeBindingMode'] === null) sc['volumeBindingMode'] = DEFAULT_BINDING_MODE
}

/** A provisioner (or a driver name) is a qualified name, checked lower-cased: upstream shows the lower-cased value. */
export function validateProvisioner(provisioner: string, path: FieldPath): FieldError[] {
  if (provisioner === '') return [required(path)]
  const lower = provisioner.toLowerCase()
  return isQualifiedName(lower).map((msg) => invalid(path, lower, msg))
}

/** At most 512 parameters, no empty key, and 256 KiB of keys and values together. */
export function validateParameters(parameters: unknown, path: FieldPath): FieldError[] {
  const entries = Object.entries(record(parameters))
  if (entries.length > MAX_PARAMETERS) return [tooLong(path, MAX_PARAMETERS)]
  const errs: FieldError[] = []
  let size = 0
  for (const [key, value] of entries) {
    if (key === '') errs.push(invalid(path, key, 'field can not be empty.'))
    size += utf8Length(key) + utf8Length(text(value))
  }
  if (size > MAX_PARAMETERS_BYTES) errs.push(tooLong(path, MAX_PARAMETERS_BYTES))
  return errs
}

function validateReclaimPolicy(policy: unknown, path: FieldPath): FieldError[] {
  // An empty policy is left to the volume plugin.
  const value = text(policy)
  return value && !RECLAIM_POLICIES.includes(value) ? [notSupported(path, value, RECLAIM_POLICIES)] : []
}

function validateBindingMode(mode: unknown, path: FieldPath): FieldError[] {
  if (mode === undefined || mode === null) return [required(path)]
  const value = text(mode)
  return BINDING_MODES.includes(value) ? [] : [notSupported(path, value, BINDING_MODES)]
}

export function validateStorageClass(sc: KubeObject): FieldError[] {
  return [
    ...validateProvisioner(text(sc['provisioner']), fieldPath('provisioner')),
    ...validateParameters(sc['parameters'], fieldPath('parameters')),
    ...validateReclaimPolicy(sc['reclaimPolicy'], fieldPath('reclaimPolicy')),
    ...validateBindingMode(sc['volumeBindingMode'], fieldPath('volumeBindingMode')),
    ...validateAllowedTopologies(sc['allowedTopologies'], fieldPath('allowedTopologies')),
  ]
}

/** The stored class is compared as upstream reads it back: with its defaults. */
export function validateStorageClassUpdate(sc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStorageClass(sc)
  if (!semanticEqual(sc['parameters'], old['parameters']))
    errs.push(forbiddenField(fieldPath('parameters'), 'updates to parameters are forbidden.'))
  if (text(sc['provisioner']) !== text(old['provisioner']))
    errs.push(forbiddenField(fieldPath('provisioner'), 'updates to provisioner are forbidden.'))
  if (text(sc['reclaimPolicy']) !== text(old['reclaimPolicy'] ?? DEFAULT_RECLAIM_POLICY))
    errs.push(forbiddenField(fieldPath('reclaimPolicy'), 'updates to reclaimPolicy are forbidden.'))
  appendAll(errs, immutableField(sc['volumeBindingMode'], old['volumeBindingMode'] ?? DEFAULT_BINDING_MODE, fieldPath('volumeBindingMode')))
  return errs
}
