/**
 * Which level a request is audited at: the first rule of the policy that
 * matches the request decides, as upstream's policy checker; no rule
 * matching means None. A rule's omitted stages are its own plus the
 * policy's, and its omitManagedFields overrides the policy's.
 */
import type { Attributes } from '../authz/authorizer.js'
import type { AuditLevel, AuditPolicy, AuditPolicyRule, AuditStage } from './types.js'

export interface AuditDecision {
  level: AuditLevel
  omitStages: ReadonlySet<AuditStage>
  omitManagedFields: boolean
}

/** What a rule is matched against: authorization's attributes, with no user for a failed authentication. */
export type AuditAttributes = Omit<Attributes, 'user'> & { user?: Attributes['user'] }

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''))
}

function resourceMatches(rule: AuditPolicyRule, attrs: AuditAttributes): boolean {
  if (!attrs.isResourceRequest) return false
  if (rule.namespaces?.length && !rule.namespaces.includes(attrs.namespace)) return false
  if (!rule.resources?.length) return true
  const { apiGroup, resource, subresource, name } = attrs
  const combined = subresource ? `${resource}/${subresource}` : resource
  return rule.resources.some((gr) => {
    if ((gr.group ?? '') !== apiGroup) return false
    if (!gr.resources?.length) return true
    if (gr.resourceNames?.length && !gr.resourceNames.includes(name)) return false
    return gr.resources.some(
      (r) =>
        r === '*' ||
        r === combined ||
        (subresource !== '' && r.startsWith('*/') && r.slice(2) === subresource) ||
        (r.endsWith('/*') && r.slice(0, -2) === resource),
    )
  })
}

function ruleMatches(rule: AuditPolicyRule, attrs: AuditAttributes): boolean {
  const user = attrs.user
  if (rule.users?.length && (!user || !rule.users.includes(user.username))) return false
  if (rule.userGroups?.length && (!user || !user.groups.some((g) => rule.userGroups?.includes(g)))) return false
  if (rule.verbs?.length && !rule.verbs.includes(attrs.verb)) return false
  if (rule.namespaces?.length || rule.resources?.length) return resourceMatches(rule, attrs)
  if (rule.nonResourceURLs?.length) return !attrs.isResourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(attrs.path, spec))
  return true
}

export class PolicyChecker {
  constructor(private readonly policy: AuditPolicy) {}

  decide(attrs: AuditAttributes): AuditDecision {
    const policyOmits = this.policy.omitStages ?? []
    const rule = this.policy.rules.find((r) => ruleMatches(r, attrs))
    if (!rule) return { level: 'None', omitStages: new Set(policyOmits), omitManagedFields: false }
    return {
      level: rule.level,
      omitStages: new Set([...policyOmits, ...(rule.omitStages ?? [])]),
      omitManagedFields: rule.omitManagedFields ?? this.policy.omitManagedFields ?? false,
    }
  }
}
