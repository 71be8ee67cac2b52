/** ReplicaSets: upstream's apps/v1 defaults, ValidateReplicaSetSpec and the selector's immutability. */
import { fieldPath, type FieldError } from '../../machinery/field.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import type { KubeObject } from '../../machinery/object.js'
import { type ControllerSelectorRules, immutableSelector, nonNegative, validateControllerSelector } from './selector.js'
import { defaultTemplate, setIfAbsent, specOf, validateLongRunningTemplate } from './template.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export function applyReplicaSetDefaults(rs: KubeObject): void {
  const spec = specOf(rs)
  setIfAbsent(spec, 'replicas', 1)
  defaultTemplate(spec)
}

/** A ReplicaSet's selector rules, which a Deployment shares: upstream words both refusals as a deployment's. */
export function replicaSetSelectorRules(opts: PodSpecValidationOptions): ControllerSelectorRules {
  return {
    kindWord: 'deployment',
    unreadableDetail: 'invalid label selector',
    templateRules: (template, path) => validateLongRunningTemplate(template, path, 'ReplicaSet', opts),
  }
}

function validateReplicaSetSpec(spec: Obj, opts: PodSpecValidationOptions): FieldError[] {
  const path = fieldPath('spec')
  const errs = [...nonNegative(spec['replicas'], path.child('replicas')), ...nonNegative(spec['minReadySeconds'], path.child('minReadySeconds'))]
  appendAll(errs, validateControllerSelector(spec, path, replicaSetSelectorRules(opts)))
  return errs
}

export function validateReplicaSet(rs: KubeObject, opts: PodSpecValidationOptions): FieldError[] {
  return validateReplicaSetSpec(specOf(rs), opts)
}

export function validateReplicaSetUpdate(rs: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): FieldError[] {
  return [...validateReplicaSetSpec(specOf(rs), opts), ...immutableSelector(specOf(rs), specOf(old), fieldPath('spec'))]
}
