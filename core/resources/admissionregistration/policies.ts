/**
 * CEL admission policies and their bindings (upstream's
 * admissionregistration/v1 defaults and ValidateValidatingAdmissionPolicy,
 * ValidateValidatingAdmissionPolicyBinding): failure policy, parameter kind,
 * match constraints, and every expression compiled when it is written.
 * Mutating policies get the same frame; their mutations are checked for
 * presence and patch type only.
 */
import { at, list, record, text } from '../columns/values.js'
import { dns1035LabelName } from '../names.js'
import type { KubeObject } from '../../machinery/object.js'
import { duplicate, type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { GoLiteral, goStrings } from '../../machinery/go-format.js'
import { validateLabelSelector } from '../../validation/label-selector.js'
import { isDNS1123Subdomain, isQualifiedName, isValidPathSegmentName } from '../../machinery/names.js'
import { type AdmissionResultType, type AdmissionVariables, admissionCompile, variableFieldType } from './cel.js'
import { validateMatchConditions } from './match-conditions.js'
import { defaultRuleScope, FAILURE_POLICIES, MATCH_POLICIES, validateNamedRuleWithOperations } from './rules.js'
import { appendAll } from '../../machinery/append-all.js'

const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge']
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn']
const NOT_FOUND_ACTIONS = ['Deny', 'Allow']
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch']
const MAX_AUDIT_ANNOTATIONS = 20
const MAX_AUDIT_VALUE_LENGTH = 5 * 1024
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])

const asRecord = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)

/** A match constraint matches equivalent requests, in every namespace and object, by default. */
function defaultMatchResources(match: unknown): void {
  const m = asRecord(match)
  if (!m) return
  m['matchPolicy'] ??= 'Equivalent'
  m['namespaceSelector'] ??= {}
  m['objectSelector'] ??= {}
  for (const rule of [...list(m['resourceRules']), ...list(m['excludeResourceRules'])]) defaultRuleScope(rule)
}

export function applyPolicyDefaults(obj: KubeObject): void {
  const spec = asRecord(obj['spec'])
  if (!spec) return
  spec['failurePolicy'] ??= 'Fail'
  defaultMatchResources(spec['matchConstraints'])
}

export function applyBindingDefaults(obj: KubeObject): void {
  const spec = asRecord(obj['spec'])
  if (!spec) return
  defaultMatchResources(spec['matchResources'])
  const paramRef = asRecord(spec['paramRef'])
  if (paramRef) paramRef['parameterNotFoundAction'] ??= 'Deny'
}

/** A policy's status is its controller's to write. */
export function preparePolicyForCreate(obj: KubeObject): void {
  obj['status'] = {}
}

function validateParamKind(kind: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const apiVersion = text(at(kind, 'apiVersion'))
  const versionPath = path.child('apiVersion')
  if (!apiVersion) errs.push(required(versionPath))
  else if (apiVersion.split('/').length > 2) errs.push(invalid(versionPath, apiVersion, `unexpected GroupVersion string: ${apiVersion}`))
  else if (apiVersion !== '/') {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion]
    if (group) {
      const msgs = isDNS1123Subdomain(group)
      if (msgs.length) errs.push(invalid(versionPath, group, msgs.join(',')))
    }
    if (!version) errs.push(invalid(versionPath, apiVersion, 'version must be specified'))
    else {
      const msgs = dns1035LabelName(version)
      if (msgs.length) errs.push(invalid(versionPath, version, msgs.join(',')))
    }
  } else {
    errs.push(invalid(versionPath, apiVersion, 'version must be specified'))
  }
  const kindName = text(at(kind, 'kind'))
  if (!kindName) errs.push(required(path.child('kind')))
  else {
    const msgs = dns1035LabelName(kindName.toLowerCase())
    if (msgs.length) errs.push(invalid(path.child('kind'), kindName, `may have mixed case, but should otherwise match: ${msgs.join(',')}`))
  }
  return errs
}

function validateMatchResources(match: unknown, path: FieldPath): FieldError[] {
  if (!isSet(match)) return []
  const errs: FieldError[] = []
  const matchPolicy = at(match, 'matchPolicy')
  if (!isSet(matchPolicy)) errs.push(required(path.child('matchPolicy')))
  else if (!MATCH_POLICIES.includes(text(matchPolicy))) errs.push(notSupported(path.child('matchPolicy'), matchPolicy, MATCH_POLICIES))
  for (const selector of ['namespaceSelector', 'objectSelector']) {
    const value = at(match, selector)
    if (!isSet(value)) errs.push(required(path.child(selector)))
    else appendAll(errs, validateLabelSelector(value, path.child(selector)))
  }
  for (const rules of ['resourceRules', 'excludeResourceRules']) {
    list(at(match, rules)).forEach((rule, i) => appendAll(errs, validateNamedRuleWithOperations(rule, path.child(rules).index(i))))
  }
  return errs
}

function compileInto(
  errs: FieldError[],
  expression: string,
  accepted: readonly AdmissionResultType[] | 'any',
  vars: AdmissionVariables,
  path: FieldPath,
  shown = expression,
): void {
  const problem = admissionCompile(expression, accepted, vars).error
  if (problem) errs.push(invalid(path, shown, problem))
}

/**
 * Checks the variables in order, each seeing the ones before it typed as
 * their expressions are (one that does not compile is dyn), as upstream's
 * composition compiles and declares them; the types the other expressions
 * see come back with the errors.
 */
function validateVariables(variables: unknown[], base: AdmissionVariables, path: FieldPath): { errs: FieldError[]; vars: AdmissionVariables } {
  const errs: FieldError[] = []
  const types: Record<string, string> = {}
  variables.forEach((variable, i) => {
    const itemPath = path.index(i)
    const name = text(at(variable, 'name'))
    if (!name.trim()) errs.push(required(itemPath.child('name'), 'name is not specified'))
    else if (!CEL_IDENTIFIER.test(name) || CEL_RESERVED.has(name)) errs.push(invalid(itemPath.child('name'), name, 'name is not a valid CEL identifier'))
    const expression = text(at(variable, 'expression'))
    let type = 'dyn'
    if (!expression.trim()) errs.push(required(itemPath.child('expression'), 'expression is not specified'))
    else {
      const compiled = admissionCompile(expression, 'any', { ...base, variables: { ...types } })
      if (compiled.error) errs.push(invalid(itemPath.child('expression'), expression, compiled.error))
      else type = variableFieldType(compiled.type ?? 'dyn')
    }
    if (name) types[name] = type
  })
  return { errs, vars: { ...base, variables: types } }
}

function validateValidation(validation: unknown, vars: AdmissionVariables, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const expression = text(at(validation, 'expression'))
  if (!expression.trim()) errs.push(required(path.child('expression'), 'expression is not specified'))
  else compileInto(errs, expression, ['bool'], vars, path.child('expression'))
  const messageExpression = text(at(validation, 'messageExpression'))
  if (messageExpression && !messageExpression.trim())
    errs.push(invalid(path.child('messageExpression'), messageExpression, 'must be non-empty if specified'))
  else if (messageExpression) compileInto(errs, messageExpression, ['string'], { ...vars, authorizer: false }, path.child('messageExpression'))
  const message = text(at(validation, 'message'))
  if (message && !message.trim()) errs.push(invalid(path.child('message'), message, 'message must be non-empty if specified'))
  else if (/[\n\r]/.test(message.trim())) errs.push(invalid(path.child('message'), message, 'message must not contain line breaks'))
  const reason = at(validation, 'reason')
  if (isSet(reason) && !VALIDATION_REASONS.includes(text(reason))) errs.push(notSupported(path.child('reason'), reason, VALIDATION_REASONS))
  return errs
}

function validateAuditAnnotation(annotation: unknown, policyName: string, vars: AdmissionVariables, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const key = text(at(annotation, 'key'))
  if (policyName) for (const msg of isQualifiedName(`${policyName}/${key}`)) errs.push(invalid(path.child('key'), `${policyName}/${key}`, msg))
  else errs.push(invalid(path.child('key'), key, 'requires metadata.name be non-empty'))
  const value = text(at(annotation, 'valueExpression')).trim()
  const valuePath = path.child('valueExpression')
  if (!value) errs.push(required(valuePath, 'valueExpression is not specified'))
  else if (value.length > MAX_AUDIT_VALUE_LENGTH) errs.push(required(valuePath, `must not exceed ${MAX_AUDIT_VALUE_LENGTH} bytes in length`))
  else compileInto(errs, value, ['string', 'null'], vars, valuePath, text(at(annotation, 'valueExpression')))
  return errs
}

/** The parts ValidatingAdmissionPolicy and MutatingAdmissionPolicy share. */
function validatePolicyFrame(spec: Record<string, unknown>, path: FieldPath, ignoreMatchConditions: boolean): { errs: FieldError[]; vars: AdmissionVariables } {
  const errs: FieldError[] = []
  const failurePolicy = spec['failurePolicy']
  if (!isSet(failurePolicy)) errs.push(required(path.child('failurePolicy')))
  else if (!FAILURE_POLICIES.includes(text(failurePolicy))) errs.push(notSupported(path.child('failurePolicy'), failurePolicy, FAILURE_POLICIES))
  const hasParams = isSet(spec['paramKind'])
  if (hasParams) appendAll(errs, validateParamKind(spec['paramKind'], path.child('paramKind')))
  const constraints = spec['matchConstraints']
  if (!isSet(constraints)) errs.push(required(path.child('matchConstraints')))
  else {
    appendAll(errs, validateMatchResources(constraints, path.child('matchConstraints')))
    // The resource rules give the expressions their object's type.
    if (list(at(constraints, 'resourceRules')).length === 0) errs.push(required(path.child('matchConstraints').child('resourceRules')))
  }
  if (!ignoreMatchConditions) appendAll(errs, validateMatchConditions(spec['matchConditions'], { params: hasParams }, path.child('matchConditions')))
  const checked = validateVariables(list(spec['variables']), { params: hasParams, authorizer: true, variables: false }, path.child('variables'))
  appendAll(errs, checked.errs)
  return { errs, vars: checked.vars }
}

export function validateValidatingPolicy(obj: KubeObject, old?: KubeObject): FieldError[] {
  const path = fieldPath('spec')
  const spec = record(obj['spec'])
  // An update that keeps the parameter kind and the match conditions does not compile them again.
  const unchanged =
    old !== undefined &&
    JSON.stringify(at(old, 'spec', 'paramKind') ?? null) === JSON.stringify(spec['paramKind'] ?? null) &&
    JSON.stringify(at(old, 'spec', 'matchConditions') ?? null) === JSON.stringify(spec['matchConditions'] ?? null)
  const { errs, vars } = validatePolicyFrame(spec, path, unchanged)
  const validations = list(spec['validations'])
  const annotations = list(spec['auditAnnotations'])
  if (validations.length === 0 && annotations.length === 0) {
    const why = 'validations or auditAnnotations must contain at least one item'
    errs.push(required(path.child('validations'), why), required(path.child('auditAnnotations'), why))
    return errs
  }
  validations.forEach((v, i) => appendAll(errs, validateValidation(v, vars, path.child('validations').index(i))))
  if (annotations.length > MAX_AUDIT_ANNOTATIONS)
    errs.push(invalid(path.child('auditAnnotations'), new GoLiteral(`[]admissionregistration.AuditAnnotation{...}`), `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`))
  const keys = new Set<string>()
  annotations.forEach((a, i) => {
    const itemPath = path.child('auditAnnotations').index(i)
    appendAll(errs, validateAuditAnnotation(a, obj.metadata.name ?? '', vars, itemPath))
    const key = text(at(a, 'key'))
    if (keys.has(key)) errs.push(duplicate(itemPath.child('key'), key))
    keys.add(key)
  })
  return errs
}

export function validateMutatingPolicy(obj: KubeObject, old?: KubeObject): FieldError[] {
  const path = fieldPath('spec')
  const spec = record(obj['spec'])
  const unchanged = old !== undefined && JSON.stringify(at(old, 'spec', 'matchConditions') ?? null) === JSON.stringify(spec['matchConditions'] ?? null)
  const { errs } = validatePolicyFrame(spec, path, unchanged)
  const mutations = list(spec['mutations'])
  if (mutations.length === 0) errs.push(required(path.child('mutations'), 'mutations must contain at least one item'))
  mutations.forEach((m, i) => {
    const typePath = path.child('mutations').index(i).child('patchType')
    const patchType = at(m, 'patchType')
    if (!isSet(patchType) || patchType === '') errs.push(required(typePath))
    else if (!PATCH_TYPES.includes(text(patchType))) errs.push(notSupported(typePath, patchType, PATCH_TYPES))
  })
  return errs
}

function validateParamRef(ref: unknown, path: FieldPath): FieldError[] {
  if (!isSet(ref)) return []
  const errs: FieldError[] = []
  const name = text(at(ref, 'name'))
  const selector = at(ref, 'selector')
  if (name) {
    for (const msg of isValidPathSegmentName(name)) errs.push(invalid(path.child('name'), name, msg))
    if (isSet(selector)) errs.push(forbiddenField(path.child('name'), 'name and selector are mutually exclusive'))
  }
  if (isSet(selector)) {
    appendAll(errs, validateLabelSelector(selector, path.child('selector')))
    if (name) errs.push(forbiddenField(path.child('selector'), 'name and selector are mutually exclusive'))
  }
  if (!name && !isSet(selector)) errs.push(required(path, 'one of name or selector must be specified'))
  const action = at(ref, 'parameterNotFoundAction')
  if (!isSet(action) || action === '') errs.push(required(path.child('parameterNotFoundAction')))
  else if (!NOT_FOUND_ACTIONS.includes(text(action))) errs.push(notSupported(path.child('parameterNotFoundAction'), action, NOT_FOUND_ACTIONS))
  return errs
}

function validateValidationActions(actions: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  actions.forEach((action, i) => {
    if (!VALIDATION_ACTIONS.includes(action)) errs.push(notSupported(path.index(i), action, VALIDATION_ACTIONS))
    if (seen.has(action)) errs.push(duplicate(path.index(i), action))
    seen.add(action)
  })
  if (seen.has('Deny') && seen.has('Warn')) {
    const shown = goStrings(actions, 'admissionregistration.ValidationAction')
    errs.push(
      invalid(path, shown, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'),
    )
  }
  if (seen.size === 0) errs.push(required(path, 'at least one validation action is required'))
  return errs
}

/** A binding of either kind: the policy it names, its parameters and resources; `validating` adds the actions. */
export function validateBinding(obj: KubeObject, validating: boolean): FieldError[] {
  const path = fieldPath('spec')
  const spec = record(obj['spec'])
  const errs: FieldError[] = []
  const policyName = text(spec['policyName'])
  if (!policyName) errs.push(required(path.child('policyName')))
  else for (const msg of isDNS1123Subdomain(policyName)) errs.push(invalid(path.child('policyName'), policyName, msg))
  appendAll(errs, validateParamRef(spec['paramRef'], path.child('paramRef')))
  // upstream reports these under the misspelt `matchResouces`; kept, since clients see that path.
  appendAll(errs, validateMatchResources(spec['matchResources'], path.child(validating ? 'matchResouces' : 'matchResources')))
  if (validating) appendAll(errs, validateValidationActions(list(spec['validationActions']).map(text), path.child('validationActions')))
  return errs
}
