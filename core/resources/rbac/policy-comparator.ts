/**
 * Whether a set of rules grants everything another set grants (upstream's
 * rbac/validation policy_comparator): the rules are broken down into one
 * group, resource, verb and name each, and every piece must be granted by
 * some owning rule. The pieces left over are what is missing, in the form
 * upstream's reconciliation adds them back.
 */
import type { PolicyRule } from './bootstrap-policy-types.js'

/** One rule per group x resource x verb (x name), and per URL x verb, in upstream's order. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = []
  const names = rule.resourceNames ?? []
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        if (names.length === 0) out.push({ verbs: [verb], apiGroups: [group], resources: [resource] })
        else for (const name of names) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] })
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) out.push({ verbs: [verb], nonResourceURLs: [url] })
  return out
}

/**
 * The pieces of `servant` no rule of `owner` grants; empty when `owner` covers it all.
 * A rule that `owner` holds as it is covers all its pieces (one mixing names and URLs aside): at each start the stored bootstrap roles
 * mostly equal the policy, and breaking their rules down again was most of the reconciliation's time.
 */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const held = new Set(owner.map(ruleKey))
  return servant
    .filter((rule) => !held.has(ruleKey(rule)) || Boolean(rule.resourceNames?.length && rule.nonResourceURLs?.length))
    .flatMap(breakdownRule)
    .filter((piece) => !owner.some((rule) => ruleCovers(rule, piece)))
}

/** The same key for rules that grant the same (field order and absent or empty lists do not matter). */
function ruleKey(rule: PolicyRule): string {
  return JSON.stringify([rule.verbs, rule.apiGroups ?? [], rule.resources ?? [], rule.resourceNames ?? [], rule.nonResourceURLs ?? []])
}

export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): boolean {
  return uncoveredRules(owner, servant).length === 0
}

function hasAll(set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  return (wanted ?? []).every((w) => (set ?? []).includes(w))
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes('*') || hasAll(owner.verbs, sub.verbs)
  const groups = (owner.apiGroups ?? []).includes('*') || hasAll(owner.apiGroups, sub.apiGroups)
  const resources = resourcesCover(owner.resources ?? [], sub.resources ?? [])
  const urls = (sub.nonResourceURLs ?? []).every((path) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, path)))
  const ownerNames = owner.resourceNames ?? []
  const names = (sub.resourceNames ?? []).length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames)
  return verbs && groups && resources && names && urls
}

/** `*` covers every resource, `*\/scale` every resource's scale subresource. */
function resourcesCover(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes('*')) return true
  return wanted.every((path) => {
    if (owner.includes(path)) return true
    const slash = path.indexOf('/')
    return slash >= 0 && owner.includes(`*/${path.slice(slash + 1)}`)
  })
}

/** A URL is covered by itself, or by a rule ending in `*` that it starts like. */
function urlCovers(owner: string, path: string): boolean {
  if (owner === path) return true
  return owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, ''))
}
