/**
 * Authorization: each authorizer in `--authorization-mode` order allows,
 * denies or has no opinion; the first decision wins (upstream's union).
 */
import type { RequestInfo } from '../machinery/request-info.js'
import type { UserInfo } from '../machinery/object.js'
import { appendAll } from '../machinery/append-all.js'

export interface Attributes {
  user: UserInfo
  verb: string
  isResourceRequest: boolean
  path: string
  namespace: string
  apiGroup: string
  apiVersion: string
  resource: string
  subresource: string
  name: string
  /**
   * The request's field selector as sent (`?fieldSelector=` or a review's
   * `fieldSelector.rawSelector`), for authorizers that allow a list only
   * when it is scoped (the Node authorizer's `spec.nodeName=<node>`).
   */
  fieldSelector?: string
}

export type Decision = 'allow' | 'deny' | 'no-opinion'

export interface AuthorizerDecision {
  decision: Decision
  reason: string
}

/** A rule as SelfSubjectRulesReview shows it (upstream's ResourceRuleInfo); empty lists are left out. */
export interface ResourceRule {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
}

export interface NonResourceRule {
  verbs: string[]
  nonResourceURLs?: string[]
}

/** What an authorizer can tell of a user's permissions in a namespace (upstream's RuleResolver.RulesFor). */
export interface SubjectRules {
  resourceRules: ResourceRule[]
  nonResourceRules: NonResourceRule[]
  /** True when the authorizer could allow more than it lists (a webhook, a node's graph). */
  incomplete: boolean
  /** What went wrong finding the rules; the rules found still hold. */
  evaluationError?: string
}

/** Upstream's authorizer.Authorizer: asynchronous, so that a webhook can answer. */
export interface Authorizer {
  authorize(attrs: Attributes): Promise<AuthorizerDecision>
  /** The rules behind its decisions, for SelfSubjectRulesReview; an authorizer without it counts as incomplete. */
  rulesFor?(user: UserInfo, namespace: string): Promise<SubjectRules>
}

export const alwaysAllow: Authorizer = {
  authorize: async () => ({ decision: 'allow', reason: '' }),
  rulesFor: async () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
}

/** `--authorization-mode=AlwaysDeny`: refuses everything (upstream: a decision of deny, no reason). */
export const alwaysDeny: Authorizer = {
  authorize: async () => ({ decision: 'deny', reason: '' }),
  rulesFor: async () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
}

export const PRIVILEGED_GROUP = 'system:masters'

/** Members of system:masters may do anything, whatever the modes say (upstream puts this first in every chain). */
export const privilegedGroup: Authorizer = {
  authorize: async ({ user }) => ({ decision: user.groups.includes(PRIVILEGED_GROUP) ? 'allow' : 'no-opinion', reason: '' }),
}

export function attributesOf(user: UserInfo, info: RequestInfo): Attributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  }
}

/**
 * The rules of several authorizers together (upstream's union of rule
 * resolvers): every rule each lists, incomplete when any is or cannot list.
 */
export async function unionRulesFor(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): Promise<SubjectRules> {
  const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false }
  const errors: string[] = []
  for (const a of authorizers) {
    if (!a.rulesFor) {
      out.incomplete = true
      continue
    }
    const r = await a.rulesFor(user, namespace)
    appendAll(out.resourceRules, r.resourceRules)
    appendAll(out.nonResourceRules, r.nonResourceRules)
    out.incomplete ||= r.incomplete
    if (r.evaluationError) errors.push(r.evaluationError)
  }
  const unique = [...new Set(errors)]
  if (unique.length) out.evaluationError = unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`
  return out
}

export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attrs: Attributes): Promise<AuthorizerDecision> {
    const reasons: string[] = []
    for (const a of this.authorizers) {
      const d = await a.authorize(attrs)
      if (d.decision !== 'no-opinion') return d
      if (d.reason) reasons.push(d.reason)
    }
    return { decision: 'no-opinion', reason: reasons.join('\n') }
  }
}

/** `User "alice" cannot list resource "pods" in API group "" in the namespace "default"`, as upstream words it. */
export function forbiddenMessage(attrs: Attributes): string {
  const who = `User ${JSON.stringify(attrs.user.username)}`
  if (!attrs.isResourceRequest) return `${who} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource
  const where = attrs.namespace ? ` in the namespace ${JSON.stringify(attrs.namespace)}` : ' at the cluster scope'
  return `${who} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)}${where}`
}
