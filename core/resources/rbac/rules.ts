/**
 * The rules of roles and bindings (upstream's pkg/apis/rbac/validation and
 * the rbac/v1 defaults). Whether the writer may grant what a role or binding
 * holds (escalation) is the authorizer's question, not asked here.
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { goStrings, goStruct } from '../../machinery/go-format.js'
import { type LabelSelectorValidationOptions, validateLabelSelector } from '../../validation/label-selector.js'
import { isDNS1123Subdomain, isValidPathSegmentName } from '../../machinery/names.js'
import { at, list, record, text } from '../columns/values.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

export const RBAC_GROUP = 'rbac.authorization.k8s.io'

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'] as const

function strings(v: unknown): string[] {
  return list(v).map(text)
}

/** One rule of a role: resource rules name groups and resources, URL rules only cluster roles hold. */
function validatePolicyRule(rule: unknown, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const r = record(rule)
  const urls = strings(r['nonResourceURLs'])
  const groups = list(r['apiGroups'])
  const resources = list(r['resources'])
  if (list(r['verbs']).length === 0) errs.push(required(path.child('verbs'), 'verbs must contain at least one value'))
  if (urls.length > 0) {
    if (namespaced) errs.push(invalid(path.child('nonResourceURLs'), goStrings(urls), 'namespaced rules cannot apply to non-resource URLs'))
    if (groups.length > 0 || resources.length > 0 || list(r['resourceNames']).length > 0)
      errs.push(invalid(path.child('nonResourceURLs'), goStrings(urls), 'rules cannot apply to both regular resources and non-resource URLs'))
    return errs
  }
  if (groups.length === 0) errs.push(required(path.child('apiGroups'), 'resource rules must supply at least one api group'))
  if (resources.length === 0) errs.push(required(path.child('resources'), 'resource rules must supply at least one resource'))
  // Resource names may go with several resources (`users`, `groups` and the names `bob`, `readers`): upstream
  // dropped that restriction long ago, and its authorizer matches a name against each resource of the rule.
  return errs
}

/** A role's rules, in checkpointed steps: a body of 3 MB holds a million of them. */
function* validateRules(role: KubeObject, namespaced: boolean): Checkpointed<FieldError[]> {
  const rules = list(role['rules'])
  const errs: FieldError[] = []
  for (let i = 0; i < rules.length; i++) {
    appendAll(errs, validatePolicyRule(rules[i], namespaced, fieldPath('rules').index(i)))
    if (checkpointDue()) yield
  }
  return errs
}

export function validateRoleInSteps(role: KubeObject): Checkpointed<FieldError[]> {
  return validateRules(role, true)
}

/** A cluster role may also gather the rules of other cluster roles, picked by label selectors. */
export function* validateClusterRoleInSteps(role: KubeObject, opts: LabelSelectorValidationOptions = {}): Checkpointed<FieldError[]> {
  const errs = yield* validateRules(role, false)
  const aggregation = role['aggregationRule']
  if (isPlainObject(aggregation)) {
    const path = fieldPath('aggregationRule').child('clusterRoleSelectors')
    const selectors = list(aggregation['clusterRoleSelectors'])
    if (selectors.length === 0) errs.push(required(path, 'at least one clusterRoleSelector required if aggregationRule is non-nil'))
    selectors.forEach((selector, i) => {
      appendAll(errs, validateLabelSelector(selector, path.index(i), opts))
      // Upstream also turns each selector into a label query, which fails where the strict rules do, and
      // reports that too (the failed conversion leaves no selector: its value prints as "null").
      if (validateLabelSelector(selector, path.index(i)).length > 0) errs.push(invalid(path.index(i), 'null', 'invalid label selector.'))
    })
  }
  return errs
}

/** An update keeps a stored aggregation selector's label values that today's rules refuse (upstream's hasInvalidLabelValueInLabelSelector). */
export function validateClusterRoleUpdateInSteps(role: KubeObject, old: KubeObject): Checkpointed<FieldError[]> {
  const aggregation = old['aggregationRule']
  const selectors = isPlainObject(aggregation) ? list(aggregation['clusterRoleSelectors']) : []
  const path = fieldPath('aggregationRule').child('clusterRoleSelectors')
  const allowInvalidLabelValueInSelector = selectors.some((selector, i) => validateLabelSelector(selector, path.index(i)).length > 0)
  return validateClusterRoleInSteps(role, { allowInvalidLabelValueInSelector })
}

function validateSubject(subject: unknown, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const s = record(subject)
  const name = text(s['name'])
  const apiGroup = text(s['apiGroup'])
  if (!name) errs.push(required(path.child('name')))
  switch (text(s['kind'])) {
    case 'ServiceAccount':
      if (name) for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(path.child('name'), name, msg))
      if (apiGroup) errs.push(notSupported(path.child('apiGroup'), apiGroup, ['']))
      if (!namespaced && !text(s['namespace'])) errs.push(required(path.child('namespace')))
      break
    case 'User':
    case 'Group': {
      const what = text(s['kind']) === 'User' ? 'user' : 'group'
      if (!name) errs.push(invalid(path.child('name'), name, `${what} name cannot be empty`))
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(path.child('apiGroup'), apiGroup, [RBAC_GROUP]))
      break
    }
    default:
      errs.push(notSupported(path.child('kind'), text(s['kind']), SUBJECT_KINDS))
  }
  return errs
}

/** A RoleBinding may grant a Role or a ClusterRole; a ClusterRoleBinding only a ClusterRole. */
function validateBinding(binding: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = []
  const ref = fieldPath('roleRef')
  const apiGroup = text(at(binding, 'roleRef', 'apiGroup'))
  const kind = text(at(binding, 'roleRef', 'kind'))
  const name = text(at(binding, 'roleRef', 'name'))
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported(ref.child('apiGroup'), apiGroup, [RBAC_GROUP]))
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole']
  if (!kinds.includes(kind)) errs.push(notSupported(ref.child('kind'), kind, kinds))
  if (!name) errs.push(required(ref.child('name')))
  else for (const msg of isValidPathSegmentName(name)) errs.push(invalid(ref.child('name'), name, msg))
  list(binding['subjects']).forEach((s, i) => appendAll(errs, validateSubject(s, namespaced, fieldPath('subjects').index(i))))
  return errs
}

export function validateRoleBinding(binding: KubeObject): FieldError[] {
  return validateBinding(binding, true)
}

export function validateClusterRoleBinding(binding: KubeObject): FieldError[] {
  return validateBinding(binding, false)
}

const ROLE_REF_FIELDS = [
  ['APIGroup', 'apiGroup'],
  ['Kind', 'kind'],
  ['Name', 'name'],
] as const

/** The role a binding grants is fixed at creation: a different grant is a new binding. */
export function validateRoleRefUnchanged(binding: KubeObject, old: KubeObject): FieldError[] {
  const changed = ROLE_REF_FIELDS.some(([, f]) => text(at(binding, 'roleRef', f)) !== text(at(old, 'roleRef', f)))
  if (!changed) return []
  return [invalid(fieldPath('roleRef'), goStruct('rbac.RoleRef', ROLE_REF_FIELDS, binding['roleRef']), 'cannot change roleRef')]
}

/**
 * rbac/v1 defaults: the roleRef's group, and the group of user and group
 * subjects. A service account's group is the empty one, which the wire form
 * leaves out.
 */
export function applyBindingDefaults(binding: KubeObject): void {
  const ref = isPlainObject(binding['roleRef']) ? binding['roleRef'] : (binding['roleRef'] = {})
  if (!text(ref['apiGroup'])) ref['apiGroup'] = RBAC_GROUP
  for (const subject of list(binding['subjects'])) {
    if (!isPlainObject(subject) || text(subject['apiGroup'])) continue
    const kind = text(subject['kind'])
    if (kind === 'User' || kind === 'Group') subject['apiGroup'] = RBAC_GROUP
  }
}
