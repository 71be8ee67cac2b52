/**
 * Match conditions (webhooks and policies): at most 64, each with a unique
 * qualified name and a CEL expression that compiles to bool.
 */
import { at, list, text } from '../columns/values.js'
import { duplicate, type FieldError, type FieldPath, invalid, required, tooMany } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import { admissionCompileError } from './cel.js'

const MAX_MATCH_CONDITIONS = 64

export function validateMatchConditions(conditions: unknown, opts: { params: boolean }, path: FieldPath): FieldError[] {
  const items = list(conditions)
  const errs: FieldError[] = []
  if (items.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, items.length, MAX_MATCH_CONDITIONS))
  const names = new Set<string>()
  items.forEach((condition, i) => {
    const itemPath = path.index(i)
    const expression = text(at(condition, 'expression')).trim()
    if (!expression) errs.push(required(itemPath.child('expression')))
    else {
      const problem = admissionCompileError(expression, ['bool'], { params: opts.params, authorizer: true, variables: false })
      if (problem) errs.push(invalid(itemPath.child('expression'), expression, problem))
    }
    const name = text(at(condition, 'name'))
    if (!name) errs.push(required(itemPath.child('name')))
    else for (const msg of isQualifiedName(name)) errs.push(invalid(itemPath.child('name'), name, msg))
    if (name) {
      if (names.has(name)) errs.push(duplicate(itemPath.child('name'), name))
      names.add(name)
    }
  })
  return errs
}
