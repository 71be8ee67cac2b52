/**
 * Namespaces carry the `kubernetes` finalizer from birth; deleting one marks
 * it Terminating, and the namespace lifecycle controller empties it and then
 * lets it go (upstream's namespace strategy and namespace controller).
 */
import { fieldLabelNotSupported } from '../field-labels.js'
import { type FieldError, fieldPath, invalid, typeInvalid } from '../../machinery/field.js'
import { isDNS1123Label, isQualifiedName } from '../../machinery/names.js'
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, nameColumn } from '../columns/common.js'
import { defineResource, NO_DELETECOLLECTION, statusSubresource } from '../define.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../../machinery/object.js'
import { defaultNamespacePhase, validateNamespaceStatusUpdate } from './namespace-status-validation.js'

export const NAMESPACE_FINALIZER = 'kubernetes'
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name'

interface NamespaceSpec {
  finalizers?: string[]
}

export function namespaceSpec(obj: KubeObject): NamespaceSpec {
  return isPlainObject(obj['spec']) ? (obj['spec'] as NamespaceSpec) : {}
}

export function namespacePhase(obj: KubeObject): string {
  const status = obj['status']
  return isPlainObject(status) && typeof status['phase'] === 'string' ? status['phase'] : ''
}

function validateFinalizers(obj: KubeObject): FieldError[] {
  const finalizers = namespaceSpec(obj).finalizers
  if (finalizers === undefined) return []
  const path = fieldPath('spec').child('finalizers')
  if (!Array.isArray(finalizers)) return [typeInvalid(path, finalizers, 'must be a list of strings')]
  const errs: FieldError[] = []
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') errs.push(typeInvalid(path.index(i), f, 'must be a string'))
    else if (f !== NAMESPACE_FINALIZER)
      for (const msg of isQualifiedName(f)) errs.push(invalid(path.index(i), f, msg))
  })
  return errs
}

export const namespaces: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  resource: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  verbs: NO_DELETECOLLECTION,
  subresources: [
    { name: 'finalize', kind: 'Namespace', verbs: ['update'] },
    // namespaceStatusStrategy: the phase must agree with the deletion stamp; the finalizers are not the status's concern.
    { ...statusSubresource('Namespace'), validateUpdate: validateNamespaceStatusUpdate },
  ],
  typeName: 'io.k8s.api.core.v1.Namespace',
  validateName: isDNS1123Label,
  strategy: {
    applyDefaults(obj) {
      // The name label lets selectors pick namespaces by name (upstream sets it in defaulting).
      const name = obj.metadata.name
      if (name) obj.metadata.labels = { ...obj.metadata.labels, [NAMESPACE_NAME_LABEL]: name }
      defaultNamespacePhase(obj)
    },
    prepareForCreate(obj) {
      const finalizers = namespaceSpec(obj).finalizers ?? []
      if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER)
      obj['spec'] = { ...namespaceSpec(obj), finalizers }
      obj['status'] = { phase: 'Active' }
    },
    prepareForUpdate(obj, old) {
      // The main resource changes neither the finalizers (finalize does) nor the status.
      obj['spec'] = { ...namespaceSpec(obj), finalizers: namespaceSpec(old).finalizers ?? [] }
      obj['status'] = old['status']
    },
    validate: validateFinalizers,
    validateUpdate: validateFinalizers,
    hasPendingFinalizers: (obj) => Boolean(namespaceSpec(obj).finalizers?.length),
    beforeDelete(obj, ctx) {
      if (!namespaceSpec(obj).finalizers?.length && !obj.metadata.finalizers?.length) return undefined
      if (obj.metadata.deletionTimestamp) return obj
      obj.metadata.deletionTimestamp = formatTimestamp(ctx.now)
      obj.metadata.deletionGracePeriodSeconds = 0
      obj['status'] = { ...(isPlainObject(obj['status']) ? obj['status'] : {}), phase: 'Terminating' }
      return obj
    },
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (obj) => ({ 'status.phase': namespacePhase(obj) }),
  },
  columns: [
    nameColumn,
    {
      name: 'Status',
      type: 'string',
      description: 'The phase of the namespace: Active or Terminating.',
      priority: 0,
      cell: (obj) => namespacePhase(obj),
    },
    ageColumn,
  ],
})
