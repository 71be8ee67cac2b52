/**
 * Authorization: each authorizer in `--authorization-mode` order allows,
 * denies or has no opinion; the first decision wins (upstream's union).
 */
import type { RequestInfo } from '../http/request-info.js'
import type { UserInfo } from '../resources/object.js'

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

/** Upstream's authorizer.Authorizer: asynchronous, so that a webhook can answer. */
export interface Authorizer {
  authorize(attrs: Attributes): Promise<AuthorizerDecision>
}

export const alwaysAllow: Authorizer = {
  authorize: async () => ({ decision: 'allow', reason: '' }),
}

/** `--authorization-mode=AlwaysDeny`: refuses everything (upstream: a decision of deny, no reason). */
export const alwaysDeny: Authorizer = {
  authorize: async () => ({ decision: 'deny', reason: '' }),
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
