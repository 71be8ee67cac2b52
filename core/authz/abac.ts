/**
 * The ABAC authorizer (`--authorization-mode=ABAC` with
 * `--authorization-policy-file`): each rule of the policy file (read by
 * core/config/abac-policy.ts) allows what it matches; nothing is ever
 * denied, so a request no rule matches has no opinion and later modes may
 * still allow it. Matching is upstream's (pkg/auth/authorizer/abac).
 */
import type { AbacPolicy } from '../config/abac-policy.js'
import type { UserInfo } from '../machinery/object.js'
import type { Attributes, Authorizer } from './authorizer.js'

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch'])

/**
 * A rule's subject: its user and its group must each match when given; `*`
 * matches anyone. A rule that names neither matches no one.
 */
function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false
  if (p.user) {
    if (p.user !== '*' && p.user !== user.username) return false
    matched = true
  }
  if (p.group) {
    if (p.group !== '*' && !user.groups.includes(p.group)) return false
    matched = true
  }
  return matched
}

/** Every rule allows reading; only a rule that is not `readonly` allows writing. */
function verbMatches(p: AbacPolicy, attrs: Attributes): boolean {
  return READ_ONLY_VERBS.has(attrs.verb) || !p.readonly
}

function resourceMatches(p: AbacPolicy, attrs: Attributes): boolean {
  if (!attrs.isResourceRequest) return false
  const wild = (field: string, actual: string) => field === '*' || field === actual
  return wild(p.namespace, attrs.namespace) && wild(p.resource, attrs.resource) && wild(p.apiGroup, attrs.apiGroup)
}

/** `*` matches every path, a path ending in `*` every path it starts, any other only itself. */
function nonResourceMatches(p: AbacPolicy, attrs: Attributes): boolean {
  if (attrs.isResourceRequest || !p.nonResourcePath) return false
  const rule = p.nonResourcePath
  if (rule === '*' || rule === attrs.path) return true
  return rule.endsWith('*') && attrs.path.startsWith(rule.replace(/\*+$/, ''))
}

export function policyMatches(p: AbacPolicy, attrs: Attributes): boolean {
  return subjectMatches(p, attrs.user) && verbMatches(p, attrs) && (resourceMatches(p, attrs) || nonResourceMatches(p, attrs))
}

export function abacAuthorizer(policies: readonly AbacPolicy[]): Authorizer {
  return {
    authorize: async (attrs) =>
      policies.some((p) => policyMatches(p, attrs)) ? { decision: 'allow', reason: '' } : { decision: 'no-opinion', reason: 'No policy matched.' },
  }
}
