/**
 * A core NodeSelector (upstream's ValidateNodeSelector and the requirement
 * checks under it): at least one term, label expressions with an operator
 * that fits their values, and field expressions on metadata.name alone.
 */
import { objectItems as objects, text } from '../columns/values.js'
import { type FieldError, type FieldPath, forbiddenField, invalid, required } from '../../machinery/field.js'
import { isDNS1123Subdomain, isValidLabelValue } from '../../machinery/names.js'
import { validateLabelName } from '../../validation/label-selector.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const values = (req: Obj): string[] => (Array.isArray(req['values']) ? req['values'].map(text) : [])

function validateLabelRequirement(req: Obj, path: FieldPath, allowInvalidLabelValue: boolean): FieldError[] {
  const errs: FieldError[] = []
  const vals = values(req)
  const operator = text(req['operator'])
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (vals.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"))
      break
    case 'Exists':
    case 'DoesNotExist':
      if (vals.length > 0) errs.push(forbiddenField(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
      break
    case 'Gt':
    case 'Lt':
      if (vals.length !== 1) errs.push(required(path.child('values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
      break
    default:
      errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'))
  }
  appendAll(errs, validateLabelName(text(req['key']), path.child('key')))
  if (!allowInvalidLabelValue)
    vals.forEach((v, i) => {
      for (const msg of isValidLabelValue(v)) errs.push(invalid(path.child('values').index(i), v, msg))
    })
  return errs
}

/** A field requirement: In or NotIn a single node name. */
function validateFieldRequirement(req: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const vals = values(req)
  const operator = text(req['operator'])
  if (operator === 'In' || operator === 'NotIn') {
    if (vals.length !== 1)
      errs.push(required(path.child('values'), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
  } else errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'))
  const key = text(req['key'])
  if (key !== 'metadata.name') errs.push(invalid(path.child('key'), key, 'not a valid field selector key'))
  else
    vals.forEach((v, i) => {
      for (const msg of isDNS1123Subdomain(v)) errs.push(invalid(path.child('values').index(i), v, msg))
    })
  return errs
}

/** Whether some label expression of the terms holds a value that is no valid label value. */
export function hasInvalidLabelValue(terms: unknown): boolean {
  return objects(terms).some((term) => objects(term['matchExpressions']).some((req) => values(req).some((v) => isValidLabelValue(v).length > 0)))
}

export function validateNodeSelector(selector: Obj, path: FieldPath, allowInvalidLabelValue: boolean): FieldError[] {
  const termsPath = path.child('nodeSelectorTerms')
  const terms = objects(selector['nodeSelectorTerms'])
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')]
  return terms.flatMap((term, i) => [
    ...objects(term['matchExpressions']).flatMap((req, j) =>
      validateLabelRequirement(req, termsPath.index(i).child('matchExpressions').index(j), allowInvalidLabelValue),
    ),
    ...objects(term['matchFields']).flatMap((req, j) => validateFieldRequirement(req, termsPath.index(i).child('matchFields').index(j))),
  ])
}
