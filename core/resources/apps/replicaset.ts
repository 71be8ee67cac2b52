/** ReplicaSets: upstream's apps/v1 defaults, ValidateReplicaSetSpec and the selector's immutability. */
import { fieldPath, type FieldError } from '../../machinery/field.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import type { KubeObject } from '../../machinery/object.js'
import { type ControllerSelectorRules, immutableSelector, nonNegative, validateControllerSelectorInSteps } from './selector.js'
import { defaultTemplateInSteps, setIfAbsent, specOf, validateLongRunningTemplateInSteps } from './template.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export function* applyReplicaSetDefaultsInSteps(rs: KubeObject): Checkpointed<void> {
  const spec = specOf(rs)
  setIfAbsent(spec, 'replicas', 1)
  yield* defaultTemplateInSteps(spec)
}

/** A ReplicaSet's selector rules, which a Deployment shares: upstream words both refusals as a deployment's. */
export function replicaSetSelectorRules(opts: PodSpecValidationOptions): ControllerSelectorRules {
  return {
    kindWord: 'deployment',
    unreadableDetail: 'invalid label selector',
    templateRules: (template, path) => validateLongRunningTemplateInSteps(template, path, 'ReplicaSet', opts),
  }
}

function* validateReplicaSetSpec(spec: Obj, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs = [...nonNegative(spec['replicas'], path.child('replicas')), ...nonNegative(spec['minReadySeconds'], path.child('minReadySeconds'))]
  yield* appendAllInSteps(errs, yield* validateControllerSelectorInSteps(spec, path, replicaSetSelectorRules(opts)))
  return errs
}

export function validateReplicaSetInSteps(rs: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  return validateReplicaSetSpec(specOf(rs), opts)
}

export function* validateReplicaSetUpdateInSteps(rs: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = yield* validateReplicaSetSpec(specOf(rs), opts)
  appendAll(errs, immutableSelector(specOf(rs), specOf(old), fieldPath('spec')))
  return errs
}
