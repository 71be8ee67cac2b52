/**
 * The resource rules admission objects match requests with (upstream's
 * validateRuleWithOperations and validateNamedRuleWithOperations): which
 * operations, API groups, versions and resources, with the wildcard rules.
 */
import { at, list, text } from '../columns/values.js'
import { duplicate, type FieldError, type FieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import { isValidPathSegmentName } from '../../machinery/names.js'
import { appendAll } from '../../machinery/append-all.js'

/** The failure and match policies every admission webhook and policy chooses from. */
export const FAILURE_POLICIES = ['Fail', 'Ignore']
export const MATCH_POLICIES = ['Equivalent', 'Exact']

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE']
const SCOPES = ['*', 'Cluster', 'Namespaced']

const strings = (v: unknown): string[] => list(v).map(text)

/** Resources, with `resource/subresource` forms and the wildcards that cover others. */
function validateResources(resources: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (resources.length === 0) errs.push(required(path))
  const withAnySubresource = new Set<string>() // x/*
  const subresourceOfAny = new Set<string>() // */x
  let anyOfAll = false // */*
  let anyResource = false // *
  let plainResource = false // x
  resources.forEach((entry, i) => {
    if (!entry) {
      errs.push(required(path.index(i)))
      return
    }
    if (entry === '*/*') anyOfAll = true
    if (entry === '*') anyResource = true
    const slash = entry.indexOf('/')
    if (slash < 0) {
      // upstream keeps only the last plain entry's verdict here.
      plainResource = entry !== '*'
      return
    }
    const resource = entry.slice(0, slash)
    const sub = entry.slice(slash + 1)
    if (withAnySubresource.has(resource)) errs.push(invalid(path.index(i), entry, `if '${resource}/*' is present, must not specify ${entry}`))
    if (subresourceOfAny.has(sub)) errs.push(invalid(path.index(i), entry, `if '*/${sub}' is present, must not specify ${entry}`))
    if (sub === '*') withAnySubresource.add(resource)
    if (resource === '*') subresourceOfAny.add(sub)
  })
  if (resources.length > 1 && anyOfAll) errs.push(invalid(path, goStrings(resources), "if '*/*' is present, must not specify other resources"))
  if (anyResource && plainResource) errs.push(invalid(path, goStrings(resources), "if '*' is present, must not specify other resources without subresources"))
  return errs
}

/** The groups, versions, resources and scope of one rule. */
function validateRule(rule: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const groups = strings(at(rule, 'apiGroups'))
  if (groups.length === 0) errs.push(required(path.child('apiGroups')))
  if (groups.length > 1 && groups.includes('*'))
    errs.push(invalid(path.child('apiGroups'), goStrings(groups), "if '*' is present, must not specify other API groups"))
  const versions = strings(at(rule, 'apiVersions'))
  if (versions.length === 0) errs.push(required(path.child('apiVersions')))
  if (versions.length > 1 && versions.includes('*'))
    errs.push(invalid(path.child('apiVersions'), goStrings(versions), "if '*' is present, must not specify other API versions"))
  versions.forEach((v, i) => {
    if (!v) errs.push(required(path.child('apiVersions').index(i)))
  })
  appendAll(errs, validateResources(strings(at(rule, 'resources')), path.child('resources')))
  const scope = at(rule, 'scope')
  if (scope !== undefined && scope !== null && !SCOPES.includes(text(scope))) errs.push(notSupported(path.child('scope'), scope, SCOPES))
  return errs
}

export function validateRuleWithOperations(rule: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const operations = strings(at(rule, 'operations'))
  if (operations.length === 0) errs.push(required(path.child('operations')))
  if (operations.length > 1 && operations.includes('*')) {
    const shown = goStrings(operations, 'admissionregistration.OperationType')
    errs.push(invalid(path.child('operations'), shown, "if '*' is present, must not specify other operations"))
  }
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(path.child('operations').index(i), op, OPERATIONS))
  })
  return [...errs, ...validateRule(rule, path)]
}

/** A policy's rule: also the names of the objects it is limited to. */
export function validateNamedRuleWithOperations(rule: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  strings(at(rule, 'resourceNames')).forEach((name, i) => {
    const namePath = path.child('resourceNames').index(i)
    for (const msg of isValidPathSegmentName(name)) errs.push(invalid(namePath, name, msg))
    if (seen.has(name)) errs.push(duplicate(namePath, name))
    seen.add(name)
  })
  return [...errs, ...validateRuleWithOperations(rule, path)]
}

/** A rule's scope defaults to every scope. */
export function defaultRuleScope(rule: unknown): void {
  if (rule !== null && typeof rule === 'object') (rule as Record<string, unknown>)['scope'] ??= '*'
}
