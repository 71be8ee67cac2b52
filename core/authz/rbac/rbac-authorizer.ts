/**
 * `--authorization-mode=RBAC` (upstream's RBACAuthorizer): allows what a
 * rule bound to the user allows, and otherwise has no opinion (RBAC never
 * denies), giving as its reason the roles it could not find. The rules come
 * from the in-memory index, so a decision reads no storage.
 */
import type { UserInfo } from '../../machinery/object.js'
import type { Authorizer, NonResourceRule, ResourceRule, SubjectRules } from '../authorizer.js'
import { type PolicyRule, ruleAllows } from './policy-rule.js'
import { aggregateErrors, describeSource, type RbacRuleResolver, type RuleSource } from './rule-resolver.js'

function resourceRule(r: PolicyRule): ResourceRule {
  const out: ResourceRule = { verbs: [...r.verbs] }
  if (r.apiGroups.length) out.apiGroups = [...r.apiGroups]
  out.resources = [...r.resources]
  if (r.resourceNames.length) out.resourceNames = [...r.resourceNames]
  return out
}

function nonResourceRule(r: PolicyRule): NonResourceRule {
  return { verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] }
}

/** Upstream's RulesFor: a rule with resources is a resource rule, one with URLs a non-resource rule (both, if both). */
export function subjectRulesOf(rules: readonly PolicyRule[], errors: readonly string[]): SubjectRules {
  const out: SubjectRules = {
    resourceRules: rules.filter((r) => r.resources.length > 0).map(resourceRule),
    nonResourceRules: rules.filter((r) => r.nonResourceURLs.length > 0).map(nonResourceRule),
    incomplete: false,
  }
  if (errors.length) out.evaluationError = aggregateErrors(errors)
  return out
}

export function rbacAuthorizer(resolver: RbacRuleResolver): Authorizer {
  return {
    async authorize(attrs) {
      let allowedBy: RuleSource | undefined
      const errors: string[] = []
      resolver.visitRulesFor(attrs.user, attrs.namespace, (source, rule, error) => {
        if (source && rule && ruleAllows(attrs, rule)) {
          allowedBy = source
          return false
        }
        if (error) errors.push(error)
        return true
      })
      if (allowedBy) return { decision: 'allow', reason: `RBAC: allowed by ${describeSource(allowedBy)}` }
      return { decision: 'no-opinion', reason: errors.length ? `RBAC: ${aggregateErrors(errors)}` : '' }
    },
    async rulesFor(user: UserInfo, namespace: string) {
      const { rules, errors } = resolver.rulesFor(user, namespace)
      return subjectRulesOf(rules, errors)
    },
  }
}
