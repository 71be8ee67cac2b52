/**
 * The rules every controller shares about its selector and the pods it
 * stamps out (upstream's ValidateLabelSelector, LabelSelectorAsSelector and
 * the "selector must match the template" check), plus the small field rules
 * (non-negative, immutable) the workload validators repeat.
 */
import { type LabelSelector, labelSelectorFromObject, type LabelSelectorObject } from '../../registry/label-selector.js'
import { sameJson } from '../../registry/subresources.js'
import { type FieldError, type FieldPath, forbiddenField, invalid, required } from '../../validation/field.js'
import { isQualifiedName, isValidLabelValue } from '../../validation/names.js'
import { validateLabels } from '../../validation/object-meta.js'
import { isPlainObject } from '../object.js'
import { goLabelSelector, goStringMap } from './go-text.js'

type Obj = Record<string, unknown>

export const NON_NEGATIVE = 'must be greater than or equal to 0'

/** upstream's ValidateNonnegativeField, for a field that may be absent. */
export function nonNegative(value: unknown, path: FieldPath): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, NON_NEGATIVE)] : []
}

function validateRequirement(req: unknown, path: FieldPath): FieldError[] {
  const r = isPlainObject(req) ? req : {}
  const errs: FieldError[] = []
  const values = Array.isArray(r['values']) ? (r['values'] as unknown[]) : []
  switch (r['operator']) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"))
      break
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbiddenField(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
      break
    default:
      errs.push(invalid(path.child('operator'), r['operator'] ?? '', 'not a valid selector operator'))
  }
  const key = typeof r['key'] === 'string' ? r['key'] : ''
  for (const msg of isQualifiedName(key)) errs.push(invalid(path.child('key'), key, msg))
  values.forEach((v, i) => {
    const value = typeof v === 'string' ? v : String(v)
    for (const msg of isValidLabelValue(value)) errs.push(invalid(path.child('values').index(i), value, msg))
  })
  return errs
}

/** upstream's ValidateLabelSelector (strict label values): nothing to say about an absent selector. */
export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  if (!isPlainObject(selector)) return []
  const errs = validateLabels(selector['matchLabels'], path.child('matchLabels'))
  const expressions = selector['matchExpressions']
  if (Array.isArray(expressions)) expressions.forEach((e, i) => errs.push(...validateRequirement(e, path.child('matchExpressions').index(i))))
  return errs
}

/** A selector with neither matchLabels nor matchExpressions: it would select every pod. */
export function selectsEverything(selector: Obj): boolean {
  const labels = isPlainObject(selector['matchLabels']) ? Object.keys(selector['matchLabels']).length : 0
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'].length : 0
  return labels + expressions === 0
}

/**
 * What upstream's LabelSelectorAsSelector makes of the object: undefined
 * when it refuses it (bad operator, key or value). An absent selector
 * selects nothing.
 */
export function parseSelector(selector: unknown): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(isPlainObject(selector) ? (selector as LabelSelectorObject) : undefined)
  } catch {
    return undefined
  }
}

/** The labels of a pod template, or undefined when it has none. */
export function templateLabels(template: unknown): Record<string, string> | undefined {
  const meta = isPlainObject(template) ? template['metadata'] : undefined
  const labels = isPlainObject(meta) ? meta['labels'] : undefined
  return isPlainObject(labels) ? (labels as Record<string, string>) : undefined
}

/** Upstream's check that a controller would own the pods it creates. */
export function selectorMatchesTemplate(selector: LabelSelector, template: unknown, path: FieldPath): FieldError[] {
  const labels = templateLabels(template)
  if (selector.empty || selector.matches(labels)) return []
  return [invalid(path.child('metadata').child('labels'), goStringMap(labels), '`selector` does not match template `labels`')]
}

/**
 * The selector rules of Deployments, ReplicaSets and StatefulSets: required,
 * well formed, not empty (`kindWord` names the kind as upstream's message does).
 */
export function validateRequiredSelector(selector: unknown, path: FieldPath, kindWord: string): FieldError[] {
  if (!isPlainObject(selector)) return [required(path)]
  const errs = validateLabelSelector(selector, path)
  if (selectsEverything(selector)) errs.push(invalid(path, goLabelSelector(selector), `empty selector is invalid for ${kindWord}`))
  return errs
}

/**
 * apiequality.Semantic.DeepEqual on decoded JSON: an empty list or map equals
 * an absent one, as Go's nil and empty slices and maps compare equal there.
 * (An empty struct behind a pointer counts as absent too: JSON cannot tell them apart.)
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return sameJson(pruneEmpty(a), pruneEmpty(b))
}

function pruneEmpty(value: unknown): unknown {
  if (value === null) return undefined
  if (Array.isArray(value)) return value.length ? value.map((v) => pruneEmpty(v) ?? null) : undefined
  if (!isPlainObject(value)) return value
  const out: Obj = {}
  for (const [k, v] of Object.entries(value)) {
    const pruned = pruneEmpty(v)
    if (pruned !== undefined) out[k] = pruned
  }
  return Object.keys(out).length ? out : undefined
}

/** upstream's ValidateImmutableField, showing the new value as `show` renders it. */
export function immutableField(next: unknown, old: unknown, path: FieldPath, show: (v: unknown) => unknown = (v) => v ?? 'null'): FieldError[] {
  return semanticEqual(next, old) ? [] : [invalid(path, show(next), 'field is immutable')]
}

/** apps/v1 and batch/v1 keep a controller's selector as created: changing it would orphan its pods. */
export function immutableSelector(spec: Obj, oldSpec: Obj, path: FieldPath): FieldError[] {
  return immutableField(spec['selector'], oldSpec['selector'], path.child('selector'), goLabelSelector)
}
