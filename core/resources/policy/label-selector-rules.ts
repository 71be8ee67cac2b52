/**
 * The rules of a metav1 LabelSelector (upstream's ValidateLabelSelector):
 * keys are qualified names, values label values, and each operator says
 * whether values belong.
 */
import { type FieldError, type FieldPath, forbiddenField, invalid, required } from '../../validation/field.js'
import { isQualifiedName, isValidLabelValue } from '../../validation/names.js'
import { list, record, text } from '../columns/values.js'

const OPERATORS_WITH_VALUES = new Set(['In', 'NotIn'])
const OPERATORS_WITHOUT_VALUES = new Set(['Exists', 'DoesNotExist'])

function validateLabelKey(key: string, path: FieldPath): FieldError[] {
  return isQualifiedName(key).map((msg) => invalid(path, key, msg))
}

/** matchLabels errors name the map itself, as upstream's ValidateLabels does. */
function validateMatchLabels(labels: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  for (const [key, value] of Object.entries(record(labels))) {
    errs.push(...validateLabelKey(key, path))
    for (const msg of isValidLabelValue(text(value))) errs.push(invalid(path, text(value), msg))
  }
  return errs
}

function validateRequirement(req: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const operator = text(record(req)['operator'])
  const values = list(record(req)['values'])
  if (OPERATORS_WITH_VALUES.has(operator)) {
    if (values.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"))
  } else if (OPERATORS_WITHOUT_VALUES.has(operator)) {
    if (values.length > 0) errs.push(forbiddenField(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
  } else {
    errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'))
  }
  errs.push(...validateLabelKey(text(record(req)['key']), path.child('key')))
  values.forEach((value, i) => {
    for (const msg of isValidLabelValue(text(value))) errs.push(invalid(path.child('values').index(i), text(value), msg))
  })
  return errs
}

/** An absent selector is valid here; whoever requires one says so. */
export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  if (selector === undefined || selector === null) return []
  const errs = validateMatchLabels(record(selector)['matchLabels'], path.child('matchLabels'))
  list(record(selector)['matchExpressions']).forEach((req, i) => {
    errs.push(...validateRequirement(req, path.child('matchExpressions').index(i)))
  })
  return errs
}
