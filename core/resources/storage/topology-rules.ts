/**
 * A StorageClass's allowedTopologies (upstream's validateAllowedTopologies
 * over core's ValidateTopologySelectorTerm): each expression has a
 * qualified key, at least one value and no value twice; a term names a key
 * once; no two terms are the same.
 */
import { duplicate, type FieldError, type FieldPath, invalid, required } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import { list, record, text } from '../columns/values.js'
import { appendAll } from '../../machinery/append-all.js'

/** A term as upstream compares terms: each key with its set of values. */
type TermValues = Map<string, Set<string>>

function validateRequirement(requirement: unknown, path: FieldPath): { values: Set<string>; errs: FieldError[] } {
  const r = record(requirement)
  const errs: FieldError[] = []
  const values = new Set<string>()
  const valuesPath = path.child('values')
  const given = list(r['values'])
  if (given.length === 0) errs.push(required(valuesPath))
  given.forEach((v, i) => {
    const value = text(v)
    if (values.has(value)) errs.push(duplicate(valuesPath.index(i), value))
    values.add(value)
  })
  const key = text(r['key'])
  for (const msg of isQualifiedName(key)) errs.push(invalid(path.child('key'), key, msg))
  return { values, errs }
}

function validateTerm(term: unknown, path: FieldPath): { term: TermValues; errs: FieldError[] } {
  const errs: FieldError[] = []
  const values: TermValues = new Map()
  const expressionsPath = path.child('matchLabelExpressions')
  list(record(term)['matchLabelExpressions']).forEach((requirement, i) => {
    const at = expressionsPath.index(i)
    const checked = validateRequirement(requirement, at)
    appendAll(errs, checked.errs)
    const key = text(record(requirement)['key'])
    if (values.has(key)) errs.push(duplicate(at.child('key'), key))
    values.set(key, checked.values)
  })
  return { term: values, errs }
}

function sameTerm(a: TermValues, b: TermValues): boolean {
  if (a.size !== b.size) return false
  for (const [key, values] of a) {
    const other = b.get(key)
    if (!other || other.size !== values.size || [...values].some((v) => !other.has(v))) return false
  }
  return true
}

export function validateAllowedTopologies(topologies: unknown, path: FieldPath): FieldError[] {
  const terms = list(topologies)
  const errs: FieldError[] = []
  // Upstream's list of terms seen starts with one empty term per term given,
  // so a term without expressions is reported as a duplicate of each of them.
  const seen: TermValues[] = terms.map(() => new Map())
  terms.forEach((t, i) => {
    const { term, errs: termErrs } = validateTerm(t, path.index(i))
    appendAll(errs, termErrs)
    for (const earlier of seen) if (sameTerm(term, earlier)) errs.push(duplicate(path.index(i).child('matchLabelExpressions'), ''))
    seen.push(term)
  })
  return errs
}
