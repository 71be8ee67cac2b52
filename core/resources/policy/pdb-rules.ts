/**
 * The rules of a PodDisruptionBudget's spec (upstream's
 * pkg/apis/policy/validation): one budget, minAvailable or maxUnavailable,
 * each a non-negative count or a percentage up to 100%.
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported } from '../../validation/field.js'
import { record } from '../columns/values.js'
import type { KubeObject } from '../object.js'
import { goIntOrString } from './go-literals.js'
import { validateLabelSelector } from './label-selector-rules.js'

const PERCENT_FMT = '[0-9]+%'
const PERCENT_RE = new RegExp(`^${PERCENT_FMT}$`)
const PERCENT_MESSAGE =
  `a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '${PERCENT_FMT}')`

/** Sorted, as upstream lists a string set. */
const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget']

/** A count or a percentage, as upstream's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
export function validateIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === 'number') return value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : []
  const text = String(value)
  if (!PERCENT_RE.test(text)) return [invalid(path, goIntOrString(text), PERCENT_MESSAGE)]
  if (Number.parseInt(text, 10) > 100) return [invalid(path, goIntOrString(text), 'must not be greater than 100%')]
  return []
}

export function validatePodDisruptionBudget(pdb: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = record(pdb['spec'])
  const path = fieldPath('spec')
  const min = spec['minAvailable']
  const max = spec['maxUnavailable']
  if (min !== undefined && max !== undefined) errs.push(invalid(path, spec, 'minAvailable and maxUnavailable cannot be both set'))
  if (min !== undefined) errs.push(...validateIntOrPercent(min, path.child('minAvailable')))
  if (max !== undefined) errs.push(...validateIntOrPercent(max, path.child('maxUnavailable')))
  errs.push(...validateLabelSelector(spec['selector'], path.child('selector')))
  const policy = spec['unhealthyPodEvictionPolicy']
  if (typeof policy === 'string' && !EVICTION_POLICIES.includes(policy))
    errs.push(notSupported(path.child('unhealthyPodEvictionPolicy'), policy, EVICTION_POLICIES))
  return errs
}

/** A client may not write the status on create; the disruption controller does. */
export function clearStatus(obj: KubeObject): void {
  delete obj['status']
}
