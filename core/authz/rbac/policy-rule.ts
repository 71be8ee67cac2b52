/**
 * One rule of a role and whether it allows a request, as upstream's rbac/v1
 * evaluation helpers decide: `*` matches any verb, group, resource or URL;
 * `*\/scale` matches the scale subresource of any resource; resourceNames,
 * when present, must name the object (so they never match a list, a watch
 * or a create, which carry no name); a URL ending in `*` matches by prefix.
 */
import { isPlainObject } from '../../machinery/object.js'
import type { Attributes } from '../authorizer.js'

/** A role's rule with every list present (empty where the object leaves it out). */
export interface PolicyRule {
  readonly verbs: readonly string[]
  readonly apiGroups: readonly string[]
  readonly resources: readonly string[]
  readonly resourceNames: readonly string[]
  readonly nonResourceURLs: readonly string[]
}

const ALL = '*'

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/** Reads a stored rule; anything malformed reads as empty, which matches nothing. */
export function policyRuleOf(raw: unknown): PolicyRule {
  const r = isPlainObject(raw) ? raw : {}
  return {
    verbs: strings(r['verbs']),
    apiGroups: strings(r['apiGroups']),
    resources: strings(r['resources']),
    resourceNames: strings(r['resourceNames']),
    nonResourceURLs: strings(r['nonResourceURLs']),
  }
}

export function policyRulesOf(raw: unknown): PolicyRule[] {
  return Array.isArray(raw) ? raw.map(policyRuleOf) : []
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb)
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return rule.apiGroups.some((g) => g === ALL || g === group)
}

/** `combined` is `resource` or `resource/subresource`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return rule.resources.some(
    (r) => r === ALL || r === combined || (subresource !== '' && r.length === subresource.length + 2 && r === `*/${subresource}`),
  )
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name)
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return rule.nonResourceURLs.some((u) => u === ALL || u === path || (u.endsWith(ALL) && path.startsWith(u.replace(/\*+$/, ''))))
}

/** Upstream's RuleAllows: resource requests by verb, group, resource and name; others by verb and path. */
export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false
  if (!attrs.isResourceRequest) return nonResourceURLMatches(rule, attrs.path)
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource
  return apiGroupMatches(rule, attrs.apiGroup) && resourceMatches(rule, combined, attrs.subresource) && resourceNameMatches(rule, attrs.name)
}
