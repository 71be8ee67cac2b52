/**
 * DaemonSets: upstream's apps/v1 defaults, ValidateDaemonSetSpec, the
 * selector's immutability, and the template generation that apps/v1 keeps in
 * the `deprecated.daemonset.template.generation` annotation.
 */
import { fieldPath, type FieldError, type FieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { type PodSpecValidationOptions, validatePodTemplateSpecInSteps } from '../core/pod-spec-validation.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { goIntOrString, goLabelSelector, goStrategy } from '../../machinery/go-format.js'
import { selectsEverything, validateLabelSelector } from '../../validation/label-selector.js'
import { intOrPercentValue, notMoreThan100Percent, validateRolloutBounds } from './int-or-percent.js'
import { immutableSelector, nonNegative, parseSelector, selectorMatchesTemplate, semanticEqual } from './selector.js'
import { alwaysRestartRules, defaultTemplateInSteps, objectAt, setIfAbsent, specOf } from './template.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation'

export function* applyDaemonSetDefaultsInSteps(ds: KubeObject): Checkpointed<void> {
  const spec = specOf(ds)
  const strategy = objectAt(spec, 'updateStrategy')
  if (!strategy['type']) strategy['type'] = 'RollingUpdate'
  if (strategy['type'] === 'RollingUpdate') {
    const rollingUpdate = objectAt(strategy, 'rollingUpdate')
    setIfAbsent(rollingUpdate, 'maxUnavailable', 1)
    setIfAbsent(rollingUpdate, 'maxSurge', 0)
  }
  setIfAbsent(spec, 'revisionHistoryLimit', 10)
  yield* defaultTemplateInSteps(spec)
}

function templateGeneration(ds: KubeObject): number {
  const text = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]
  return text !== undefined && /^[+-]?\d+$/.test(text) ? Number.parseInt(text, 10) : 0
}

function setTemplateGeneration(ds: KubeObject, generation: number): void {
  ds.metadata.annotations = { ...ds.metadata.annotations, [TEMPLATE_GENERATION_ANNOTATION]: String(generation) }
}

/** A new DaemonSet's template is generation 1 (or what the client gave, when higher). */
export function prepareDaemonSetForCreate(ds: KubeObject): void {
  setTemplateGeneration(ds, Math.max(1, templateGeneration(ds)))
}

/** The template generation is the server's: it counts the template's changes. */
export function prepareDaemonSetForUpdate(ds: KubeObject, old: KubeObject): void {
  const changed = !semanticEqual(specOf(ds)['template'], specOf(old)['template'])
  setTemplateGeneration(ds, templateGeneration(old) + (changed ? 1 : 0))
}

function validateRollingUpdate(rollingUpdate: Obj, path: FieldPath): FieldError[] {
  const maxUnavailable = rollingUpdate['maxUnavailable']
  const maxSurge = rollingUpdate['maxSurge']
  const errs = [
    ...validateRolloutBounds(rollingUpdate, path),
    ...notMoreThan100Percent(maxUnavailable, path.child('maxUnavailable')),
    ...notMoreThan100Percent(maxSurge, path.child('maxSurge')),
  ]
  // Exactly one of the two bounds may be non-zero.
  const hasUnavailable = intOrPercentValue(maxUnavailable) !== 0
  const hasSurge = intOrPercentValue(maxSurge) !== 0
  if (hasUnavailable && hasSurge) errs.push(invalid(path.child('maxSurge'), goIntOrString(maxSurge), 'may not be set when maxUnavailable is non-zero'))
  if (!hasUnavailable && !hasSurge) errs.push(required(path.child('maxUnavailable'), 'cannot be 0 when maxSurge is 0'))
  return errs
}

function validateUpdateStrategy(strategy: unknown, path: FieldPath): FieldError[] {
  const s = isPlainObject(strategy) ? strategy : {}
  switch (s['type']) {
    case 'OnDelete':
      return []
    case 'RollingUpdate':
      return isPlainObject(s['rollingUpdate']) ? validateRollingUpdate(s['rollingUpdate'], path.child('rollingUpdate')) : [required(path.child('rollingUpdate'))]
    default:
      return [notSupported(path, goStrategy('apps.DaemonSetUpdateStrategy', 'apps.RollingUpdateDaemonSet', s), ['RollingUpdate', 'OnDelete'])]
  }
}

function* validateDaemonSetSpec(spec: Obj, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const selector = spec['selector']
  // Unlike the other controllers, an absent selector is only reported through the template mismatch.
  const errs = validateLabelSelector(selector, path.child('selector'))
  const parsed = parseSelector(selector)
  if (parsed) appendAll(errs, selectorMatchesTemplate(parsed, spec['template'], path.child('template')))
  if (isPlainObject(selector) && selectsEverything(selector))
    errs.push(invalid(path.child('selector'), goLabelSelector(selector), 'empty selector is invalid for daemonset'))
  yield* appendAllInSteps(errs, yield* validatePodTemplateSpecInSteps(spec['template'], path.child('template'), opts))
  appendAll(errs, alwaysRestartRules(spec['template'], path.child('template'), 'DaemonSet'))
  appendAll(errs, nonNegative(spec['minReadySeconds'], path.child('minReadySeconds')))
  appendAll(errs, validateUpdateStrategy(spec['updateStrategy'], path.child('updateStrategy')))
  appendAll(errs, nonNegative(spec['revisionHistoryLimit'], path.child('revisionHistoryLimit')))
  return errs
}

export function validateDaemonSetInSteps(ds: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  return validateDaemonSetSpec(specOf(ds), opts)
}

export function* validateDaemonSetUpdateInSteps(ds: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = yield* validateDaemonSetSpec(specOf(ds), opts)
  appendAll(errs, immutableSelector(specOf(ds), specOf(old), fieldPath('spec')))
  return errs
}
