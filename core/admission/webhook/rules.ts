/**
 * Whether one rule of a webhook covers a request (upstream's
 * admission/plugin/webhook/predicates/rules): the operation, the API group,
 * version and resource (a star, `pods/status`, a star with `/status`, `pods/` with a star,
 * a star for both)
 * and the scope. The webhook configurations themselves, and the admission
 * policies, are never sent to webhooks, so that a broken webhook cannot
 * lock its own fix out.
 */
import type { AdmissionOperation } from '../attributes.js'

/** A rule as the API carries it (admissionregistration/v1 RuleWithOperations). */
export interface WebhookRule {
  operations?: string[]
  apiGroups?: string[]
  apiVersions?: string[]
  resources?: string[]
  scope?: string
}

/** What a rule is matched against: the request's resource, or an equivalent one for `matchPolicy: Equivalent`. */
export interface RuleTarget {
  operation: AdmissionOperation
  group: string
  version: string
  resource: string
  subresource: string
  /** For a namespace object itself, upstream's attributes carry its name here; cluster-scoped objects have ''. */
  namespace: string
}

const anyOrHas = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((v) => v === '*' || v === value)

/**
 * Whether a rule's `resources` cover `resource` with `subresource` (upstream's rules.Matcher, which
 * admission policies match with too): `pods/*` covers pods itself and every subresource of it.
 */
export function resourcesMatch(resources: readonly string[] | undefined, resource: string, subresource: string): boolean {
  return (resources ?? []).some((entry) => {
    const slash = entry.indexOf('/')
    const res = slash < 0 ? entry : entry.slice(0, slash)
    const sub = slash < 0 ? '' : entry.slice(slash + 1)
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource)
  })
}

const isNamespaceObject = (t: RuleTarget): boolean => t.group === '' && t.resource === 'namespaces'

function scopeMatches(scope: string | undefined, target: RuleTarget): boolean {
  if (scope === undefined || scope === '*') return true
  // A namespace object is cluster-scoped although its attributes carry a namespace (its own name).
  if (scope === 'Namespaced') return !isNamespaceObject(target) && target.namespace !== ''
  if (scope === 'Cluster') return isNamespaceObject(target) || target.namespace === ''
  return false
}

export function ruleMatches(rule: WebhookRule, target: RuleTarget): boolean {
  return (
    scopeMatches(rule.scope, target) &&
    anyOrHas(rule.operations, target.operation) &&
    anyOrHas(rule.apiGroups, target.group) &&
    anyOrHas(rule.apiVersions, target.version) &&
    resourcesMatch(rule.resources, target.resource, target.subresource)
  )
}

const EXEMPT_RESOURCES = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
])

/** upstream's IsExemptAdmissionConfigurationResource. */
export function isExemptFromWebhooks(group: string, resource: string): boolean {
  return group === 'admissionregistration.k8s.io' && EXEMPT_RESOURCES.has(resource)
}
