/**
 * The rules of a metav1.LabelSelector (upstream's ValidateLabelSelector and
 * ValidateLabelSelectorRequirement), shared by every object that holds one:
 * matchLabels as labels, and each expression's key, operator and values.
 * What the selector means (matching) is core/machinery/label-selector.ts.
 */
import { type FieldError, type FieldPath, forbiddenField, invalid, required } from '../machinery/field.js'
import { isQualifiedName, isValidLabelValue } from '../machinery/names.js'
import { validateLabels } from './object-meta.js'
import { isPlainObject } from '../machinery/object.js'
import { appendAll } from '../machinery/append-all.js'

export interface LabelSelectorValidationOptions {
  /**
   * Skip the label-value check of expression values. Upstream sets it on the
   * update of an object whose stored selector already holds such a value,
   * so that objects written before the check can still be changed.
   */
  allowInvalidLabelValueInSelector?: boolean
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : '')

/** upstream's ValidateLabelName: a label key is a qualified name. */
export function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(path, name, msg))
}

function requirementValues(req: unknown): unknown[] {
  const values = isPlainObject(req) ? req['values'] : undefined
  return Array.isArray(values) ? values : []
}

/** One matchExpressions entry: the operator decides whether values belong. */
export function validateLabelSelectorRequirement(req: unknown, path: FieldPath, opts: LabelSelectorValidationOptions = {}): FieldError[] {
  const r = isPlainObject(req) ? req : {}
  const values = requirementValues(r).map(asText)
  const errs: FieldError[] = []
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
      errs.push(invalid(path.child('operator'), asText(r['operator']), 'not a valid selector operator'))
  }
  appendAll(errs, validateLabelName(asText(r['key']), path.child('key')))
  if (!opts.allowInvalidLabelValueInSelector) {
    values.forEach((value, i) => {
      for (const msg of isValidLabelValue(value)) errs.push(invalid(path.child('values').index(i), value, msg))
    })
  }
  return errs
}

/** An absent selector is valid here; whoever requires one says so. */
export function validateLabelSelector(selector: unknown, path: FieldPath, opts: LabelSelectorValidationOptions = {}): FieldError[] {
  if (!isPlainObject(selector)) return []
  const errs = validateLabels(selector['matchLabels'], path.child('matchLabels'))
  const expressions = selector['matchExpressions']
  if (Array.isArray(expressions)) {
    expressions.forEach((req, i) => appendAll(errs, validateLabelSelectorRequirement(req, path.child('matchExpressions').index(i), opts)))
  }
  return errs
}

/**
 * The options for an update: relaxed when the stored selector would not pass
 * today's strict rules (upstream's hasInvalidLabelValueInLabelSelector).
 */
export function labelSelectorUpdateOptions(oldSelector: unknown, path: FieldPath): LabelSelectorValidationOptions {
  return { allowInvalidLabelValueInSelector: validateLabelSelector(oldSelector, path).length > 0 }
}

/** A selector with neither matchLabels nor matchExpressions: it would select everything. */
export function selectsEverything(selector: Record<string, unknown>): boolean {
  const labels = isPlainObject(selector['matchLabels']) ? Object.keys(selector['matchLabels']).length : 0
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'].length : 0
  return labels + expressions === 0
}
