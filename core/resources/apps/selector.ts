/**
 * The rules every controller shares about its selector and the pods it
 * stamps out (a required, non-empty selector that LabelSelectorAsSelector
 * accepts and that matches the template), plus the small field rules
 * (non-negative, immutable) the workload validators repeat.
 */
import { type LabelSelector, labelSelectorFromObject, type LabelSelectorObject } from '../../machinery/label-selector.js'
import { sameJson } from '../../machinery/same-json.js'
import { type FieldError, type FieldPath, invalid, required } from '../../machinery/field.js'
import { goLabelSelector, goStringMap } from '../../machinery/go-format.js'
import { selectsEverything, validateLabelSelector } from '../../validation/label-selector.js'
import { isPlainObject } from '../../machinery/object.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import type { Checkpointed } from '../../machinery/time-slice.js'

type Obj = Record<string, unknown>

export const NON_NEGATIVE = 'must be greater than or equal to 0'

/** upstream's ValidateNonnegativeField, for a field that may be absent. */
export function nonNegative(value: unknown, path: FieldPath): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, NON_NEGATIVE)] : []
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

/** How a controller kind words and completes upstream's selector rules. */
export interface ControllerSelectorRules {
  /** The kind as upstream's "empty selector is invalid for <kind>" names it. */
  kindWord: string
  /** The detail of the refusal when LabelSelectorAsSelector cannot read the selector. */
  unreadableDetail: string
  /** The template's own rules, checked (as upstream does) only once the selector could be read; in checkpointed steps. */
  templateRules: (template: unknown, path: FieldPath) => Checkpointed<FieldError[]>
}

/**
 * The selector rules of Deployments, ReplicaSets and StatefulSets: required,
 * well formed (always strictly: it must pass LabelSelectorAsSelector too),
 * not empty, readable, and selecting the template's pods.
 */
export function* validateControllerSelectorInSteps(spec: Obj, path: FieldPath, rules: ControllerSelectorRules): Checkpointed<FieldError[]> {
  const selectorPath = path.child('selector')
  const errs: FieldError[] = []
  if (!isPlainObject(spec['selector'])) errs.push(required(selectorPath))
  else {
    appendAll(errs, validateLabelSelector(spec['selector'], selectorPath))
    if (selectsEverything(spec['selector'])) errs.push(invalid(selectorPath, goLabelSelector(spec['selector']), `empty selector is invalid for ${rules.kindWord}`))
  }
  const selector = parseSelector(spec['selector'])
  if (!selector) errs.push(invalid(selectorPath, goLabelSelector(spec['selector']), rules.unreadableDetail))
  else {
    appendAll(errs, selectorMatchesTemplate(selector, spec['template'], path.child('template')))
    yield* appendAllInSteps(errs, yield* rules.templateRules(spec['template'], path.child('template')))
  }
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
