/** Deployments: upstream's apps/v1 defaults, ValidateDeploymentSpec and the selector's immutability. */
import { fieldPath, type FieldError, type FieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { goIntOrString, goStrategy } from '../../machinery/go-format.js'
import { intOrPercentValue, notMoreThan100Percent, validateRolloutBounds } from './int-or-percent.js'
import { replicaSetSelectorRules } from './replicaset.js'
import { immutableSelector, nonNegative, validateControllerSelectorInSteps } from './selector.js'
import { defaultTemplateInSteps, objectAt, setIfAbsent, specOf } from './template.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export function* applyDeploymentDefaultsInSteps(deployment: KubeObject): Checkpointed<void> {
  const spec = specOf(deployment)
  setIfAbsent(spec, 'replicas', 1)
  const strategy = objectAt(spec, 'strategy')
  if (!strategy['type']) strategy['type'] = 'RollingUpdate'
  if (strategy['type'] === 'RollingUpdate') {
    const rollingUpdate = objectAt(strategy, 'rollingUpdate')
    setIfAbsent(rollingUpdate, 'maxUnavailable', '25%')
    setIfAbsent(rollingUpdate, 'maxSurge', '25%')
  }
  setIfAbsent(spec, 'revisionHistoryLimit', 10)
  setIfAbsent(spec, 'progressDeadlineSeconds', 600)
  yield* defaultTemplateInSteps(spec)
}

function validateRollingUpdate(rollingUpdate: Obj, path: FieldPath): FieldError[] {
  const maxUnavailable = rollingUpdate['maxUnavailable']
  const maxSurge = rollingUpdate['maxSurge']
  const errs = validateRolloutBounds(rollingUpdate, path)
  if (intOrPercentValue(maxUnavailable) === 0 && intOrPercentValue(maxSurge) === 0)
    errs.push(invalid(path.child('maxUnavailable'), goIntOrString(maxUnavailable), 'may not be 0 when `maxSurge` is 0'))
  appendAll(errs, notMoreThan100Percent(maxUnavailable, path.child('maxUnavailable')))
  return errs
}

function validateStrategy(strategy: unknown, path: FieldPath): FieldError[] {
  const s = isPlainObject(strategy) ? strategy : {}
  const rollingUpdate = s['rollingUpdate']
  switch (s['type']) {
    case 'Recreate':
      return isPlainObject(rollingUpdate)
        ? [forbiddenField(path.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")]
        : []
    case 'RollingUpdate':
      return isPlainObject(rollingUpdate)
        ? validateRollingUpdate(rollingUpdate, path.child('rollingUpdate'))
        : [required(path.child('rollingUpdate'), 'this should be defaulted and never be nil')]
    default:
      return [notSupported(path, goStrategy('apps.DeploymentStrategy', 'apps.RollingUpdateDeployment', s), ['Recreate', 'RollingUpdate'])]
  }
}

function* validateDeploymentSpec(spec: Obj, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs = nonNegative(spec['replicas'], path.child('replicas'))
  yield* appendAllInSteps(errs, yield* validateControllerSelectorInSteps(spec, path, replicaSetSelectorRules(opts)))
  appendAll(errs, validateStrategy(spec['strategy'], path.child('strategy')))
  appendAll(errs, nonNegative(spec['minReadySeconds'], path.child('minReadySeconds')))
  appendAll(errs, nonNegative(spec['revisionHistoryLimit'], path.child('revisionHistoryLimit')))
  const deadline = spec['progressDeadlineSeconds']
  if (typeof deadline === 'number') {
    appendAll(errs, nonNegative(deadline, path.child('progressDeadlineSeconds')))
    const minReady = typeof spec['minReadySeconds'] === 'number' ? spec['minReadySeconds'] : 0
    if (deadline <= minReady) errs.push(invalid(path.child('progressDeadlineSeconds'), deadline, 'must be greater than minReadySeconds'))
  }
  return errs
}

export function validateDeploymentInSteps(deployment: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  return validateDeploymentSpec(specOf(deployment), opts)
}

/** The spec's rules again, and a selector that stays as created (apps/v1 made it immutable). */
export function* validateDeploymentUpdateInSteps(deployment: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = yield* validateDeploymentSpec(specOf(deployment), opts)
  appendAll(errs, immutableSelector(specOf(deployment), specOf(old), fieldPath('spec')))
  return errs
}
