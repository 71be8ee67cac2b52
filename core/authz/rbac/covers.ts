/**
 * Whether one set of rules covers another (upstream's Covers in
 * component-helpers/auth/rbac/validation): the rules to grant are broken
 * down to one verb, group, resource and name each, and every piece must be
 * covered by a single rule of the owner. What is left over is what the
 * escalation message lists, compacted and printed as upstream prints it.
 */
import type { PolicyRule } from './policy-rule.js'
import { appendAll } from '../../machinery/append-all.js'

const ALL = '*'

function rule(parts: Partial<PolicyRule>): PolicyRule {
  return { verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...parts }
}

/** The rule as pieces of at most one verb, group, resource and resource name (URLs combine with verbs only). */
export function breakdownRule(r: PolicyRule): PolicyRule[] {
  const pieces: PolicyRule[] = []
  for (const group of r.apiGroups)
    for (const resource of r.resources)
      for (const verb of r.verbs) {
        const base = { apiGroups: [group], resources: [resource], verbs: [verb] }
        if (r.resourceNames.length === 0) pieces.push(rule(base))
        else for (const name of r.resourceNames) pieces.push(rule({ ...base, resourceNames: [name] }))
      }
  for (const url of r.nonResourceURLs) for (const verb of r.verbs) pieces.push(rule({ nonResourceURLs: [url], verbs: [verb] }))
  return pieces
}

const hasAll = (set: readonly string[], wanted: readonly string[]): boolean => wanted.every((w) => set.includes(w))

function resourcesCovered(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes(ALL) || hasAll(owner, wanted)) return true
  return wanted.every((path) => {
    if (owner.includes(path)) return true
    const slash = path.indexOf('/')
    // A subresource is also covered by `*/<subresource>`.
    return slash >= 0 && owner.includes(`*/${path.slice(slash + 1)}`)
  })
}

function urlCovered(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith(ALL) && path.startsWith(owner.replace(/\*+$/, '')))
}

/** Whether `owner` (any rule) covers `piece` (one piece of a breakdown). */
export function ruleCovers(owner: PolicyRule, piece: PolicyRule): boolean {
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, piece.verbs)
  const groups = owner.apiGroups.includes(ALL) || hasAll(owner.apiGroups, piece.apiGroups)
  const resources = resourcesCovered(owner.resources, piece.resources)
  const urls = piece.nonResourceURLs.every((path) => owner.nonResourceURLs.some((o) => urlCovered(o, path)))
  // An owner limited to names covers only named pieces, and only those names.
  const names =
    piece.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, piece.resourceNames)
  return verbs && groups && resources && names && urls
}

/** The pieces of `wanted` that no rule of `owner` covers; empty when covered. */
export function uncoveredRules(owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  return wanted.flatMap(breakdownRule).filter((piece) => !owner.some((o) => ruleCovers(o, piece)))
}

/** Pieces for one group and resource with nothing else, merged into one rule with all their verbs (upstream's CompactRules). */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = []
  const simple = new Map<string, { apiGroups: string[]; resources: string[]; verbs: string[] }>()
  for (const r of rules) {
    const isSimple = r.resourceNames.length === 0 && r.nonResourceURLs.length === 0 && r.apiGroups.length === 1 && r.resources.length === 1
    if (!isSimple) {
      compacted.push(r)
      continue
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0]])
    const seen = simple.get(key)
    if (seen) appendAll(seen.verbs, r.verbs)
    else simple.set(key, { apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] })
  }
  for (const r of simple.values()) compacted.push(rule(r))
  return compacted
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
function goQuotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`
}

/** `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`: the fields a rule has, in upstream's order. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = []
  if (r.apiGroups.length) parts.push(`APIGroups:${goQuotedList(r.apiGroups)}`)
  if (r.resources.length) parts.push(`Resources:${goQuotedList(r.resources)}`)
  if (r.nonResourceURLs.length) parts.push(`NonResourceURLs:${goQuotedList(r.nonResourceURLs)}`)
  if (r.resourceNames.length) parts.push(`ResourceNames:${goQuotedList(r.resourceNames)}`)
  if (r.verbs.length) parts.push(`Verbs:${goQuotedList(r.verbs)}`)
  return `{${parts.join(', ')}}`
}

/** The missing rules as upstream's escalation message lists them: compacted, printed, sorted, each once. */
export function describeMissingRules(missing: readonly PolicyRule[]): string[] {
  return [...new Set(compactRules(missing).map(compactString))].sort()
}
