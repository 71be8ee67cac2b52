/**
 * The rules of a PodDisruptionBudget's spec (upstream's
 * pkg/apis/policy/validation): one budget, minAvailable or maxUnavailable,
 * each a non-negative count or a percentage up to 100%.
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported } from '../../machinery/field.js'
import { record } from '../columns/values.js'
import type { KubeObject } from '../../machinery/object.js'
import { labelSelectorUpdateOptions, type LabelSelectorValidationOptions, validateLabelSelector } from '../../validation/label-selector.js'
import { notMoreThan100Percent, validatePositiveIntOrPercent } from '../apps/int-or-percent.js'
import { appendAll } from '../../machinery/append-all.js'

/** Sorted, as upstream lists a string set. */
const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget']

/** A count or a percentage, as upstream's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
export function validateIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  return [...validatePositiveIntOrPercent(value, path), ...notMoreThan100Percent(value, path)]
}

export function validatePodDisruptionBudget(pdb: KubeObject, selectorOptions: LabelSelectorValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = []
  const spec = record(pdb['spec'])
  const path = fieldPath('spec')
  const min = spec['minAvailable']
  const max = spec['maxUnavailable']
  if (min !== undefined && max !== undefined) errs.push(invalid(path, spec, 'minAvailable and maxUnavailable cannot be both set'))
  if (min !== undefined) appendAll(errs, validateIntOrPercent(min, path.child('minAvailable')))
  if (max !== undefined) appendAll(errs, validateIntOrPercent(max, path.child('maxUnavailable')))
  appendAll(errs, validateLabelSelector(spec['selector'], path.child('selector'), selectorOptions))
  const policy = spec['unhealthyPodEvictionPolicy']
  if (typeof policy === 'string' && !EVICTION_POLICIES.includes(policy))
    errs.push(notSupported(path.child('unhealthyPodEvictionPolicy'), policy, EVICTION_POLICIES))
  return errs
}

/** An update may keep expression values that a budget stored before the values were checked. */
export function validatePodDisruptionBudgetUpdate(pdb: KubeObject, old: KubeObject): FieldError[] {
  const oldSelector = record(old['spec'])['selector']
  return validatePodDisruptionBudget(pdb, labelSelectorUpdateOptions(oldSelector, fieldPath('spec').child('selector')))
}
