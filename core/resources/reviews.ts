/**
 * Create-only virtual resources that answer questions about the caller:
 * `kubectl auth whoami` (SelfSubjectReview) and `kubectl auth can-i`
 * (SelfSubjectAccessReview). Nothing is stored.
 */
import { badRequest } from '../http/status-error.js'
import type { ResourceEntry } from './catalogue.js'
import { isPlainObject, type UserInfo } from './object.js'

/** Decides whether the caller may do what a review's spec describes (the authorizer chain). */
export type AccessDecider = (user: UserInfo, spec: Record<string, unknown>) => { allowed: boolean; reason?: string }

const noValidation = () => [] as string[]

export const selfSubjectReviews: ResourceEntry = {
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'SelfSubjectReview',
  listKind: 'SelfSubjectReviewList',
  resource: 'selfsubjectreviews',
  singular: 'selfsubjectreview',
  namespaced: false,
  verbs: ['create'],
  typeName: 'io.k8s.api.authentication.v1.SelfSubjectReview',
  validateName: noValidation,
  strategy: {},
  columns: [],
  virtualCreate(obj, ctx) {
    const userInfo: Record<string, unknown> = { username: ctx.user.username, groups: ctx.user.groups }
    if (ctx.user.uid) userInfo['uid'] = ctx.user.uid
    if (ctx.user.extra) userInfo['extra'] = ctx.user.extra
    return {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null as unknown as string, ...obj.metadata },
      status: { userInfo },
    }
  },
}

export function selfSubjectAccessReviews(decide: AccessDecider): ResourceEntry {
  return {
    group: 'authorization.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectAccessReview',
    listKind: 'SelfSubjectAccessReviewList',
    resource: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    verbs: ['create'],
    typeName: 'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
    validateName: noValidation,
    strategy: {},
    columns: [],
    virtualCreate(obj, ctx) {
      const spec = obj['spec']
      if (!isPlainObject(spec)) throw badRequest('spec is required')
      const hasResource = isPlainObject(spec['resourceAttributes'])
      const hasNonResource = isPlainObject(spec['nonResourceAttributes'])
      if (hasResource === hasNonResource)
        throw badRequest('exactly one of nonResourceAttributes or resourceAttributes must be specified')
      const { allowed, reason } = decide(ctx.user, spec)
      return {
        kind: 'SelfSubjectAccessReview',
        apiVersion: 'authorization.k8s.io/v1',
        metadata: { creationTimestamp: null as unknown as string, ...obj.metadata },
        spec,
        status: reason ? { allowed, reason } : { allowed },
      }
    },
  }
}
