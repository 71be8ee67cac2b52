/**
 * A metav1.LabelSelector's rules (upstream's ValidateLabelSelector), shared by
 * network policies and the admission objects: label keys and values, and the
 * operators with the values each one needs.
 */
import { at, list, text } from '../columns/values.js'
import { type FieldError, type FieldPath, forbiddenField, invalid, required } from '../../validation/field.js'
import { isQualifiedName, isValidLabelValue } from '../../validation/names.js'
import { validateLabels } from '../../validation/object-meta.js'

export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  if (selector === undefined || selector === null) return []
  const errs = validateLabels(at(selector, 'matchLabels'), path.child('matchLabels'))
  list(at(selector, 'matchExpressions')).forEach((expr, i) => errs.push(...validateRequirement(expr, path.child('matchExpressions').index(i))))
  return errs
}

function validateRequirement(expr: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const operator = text(at(expr, 'operator'))
  const values = list(at(expr, 'values')).map(text)
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"))
      break
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbiddenField(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
      break
    default:
      errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'))
  }
  const key = text(at(expr, 'key'))
  for (const msg of isQualifiedName(key)) errs.push(invalid(path.child('key'), key, msg))
  values.forEach((value, i) => {
    for (const msg of isValidLabelValue(value)) errs.push(invalid(path.child('values').index(i), value, msg))
  })
  return errs
}
