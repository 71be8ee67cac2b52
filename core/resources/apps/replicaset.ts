/** ReplicaSets: upstream's apps/v1 defaults, ValidateReplicaSetSpec and the selector's immutability. */
import { fieldPath, type FieldError, invalid } from '../../validation/field.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import type { KubeObject } from '../object.js'
import { goLabelSelector } from './go-text.js'
import { immutableSelector, nonNegative, parseSelector, selectorMatchesTemplate, validateRequiredSelector } from './selector.js'
import { defaultTemplate, setIfAbsent, specOf, validateLongRunningTemplate } from './template.js'

type Obj = Record<string, unknown>

export function applyReplicaSetDefaults(rs: KubeObject): void {
  const spec = specOf(rs)
  setIfAbsent(spec, 'replicas', 1)
  defaultTemplate(spec)
}

function validateReplicaSetSpec(spec: Obj, opts: PodSpecValidationOptions): FieldError[] {
  const path = fieldPath('spec')
  const errs = [...nonNegative(spec['replicas'], path.child('replicas')), ...nonNegative(spec['minReadySeconds'], path.child('minReadySeconds'))]
  // Upstream words the empty-selector refusal of a ReplicaSet as a deployment's.
  errs.push(...validateRequiredSelector(spec['selector'], path.child('selector'), 'deployment'))
  const selector = parseSelector(spec['selector'])
  if (!selector) errs.push(invalid(path.child('selector'), goLabelSelector(spec['selector']), 'invalid label selector'))
  else {
    errs.push(...selectorMatchesTemplate(selector, spec['template'], path.child('template')))
    errs.push(...validateLongRunningTemplate(spec['template'], path.child('template'), 'ReplicaSet', opts))
  }
  return errs
}

export function validateReplicaSet(rs: KubeObject, opts: PodSpecValidationOptions): FieldError[] {
  return validateReplicaSetSpec(specOf(rs), opts)
}

export function validateReplicaSetUpdate(rs: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): FieldError[] {
  return [...validateReplicaSetSpec(specOf(rs), opts), ...immutableSelector(specOf(rs), specOf(old), fieldPath('spec'))]
}
