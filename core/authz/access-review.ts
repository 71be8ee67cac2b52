/**
 * The decision behind SelfSubjectAccessReview (`kubectl auth can-i`): the
 * review's spec read as authorization attributes and put to the same
 * authorizer chain that guards requests.
 */
import { isPlainObject, type UserInfo } from '../machinery/object.js'
import type { Attributes, Authorizer } from './authorizer.js'

/** Decides whether the caller may do what a review's spec describes (the authorizer chain). */
export type AccessDecider = (user: UserInfo, spec: Record<string, unknown>) => Promise<{ allowed: boolean; reason?: string }>

const text = (v: unknown) => (typeof v === 'string' ? v : '')

export function accessDecider(authorizer: Authorizer): AccessDecider {
  return async (user, spec) => {
    const ra = isPlainObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined
    const nra = isPlainObject(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : undefined
    const attrs: Attributes = {
      user,
      verb: text(ra?.['verb'] ?? nra?.['verb']),
      isResourceRequest: Boolean(ra),
      path: text(nra?.['path']),
      namespace: text(ra?.['namespace']),
      apiGroup: text(ra?.['group']),
      apiVersion: text(ra?.['version']),
      resource: text(ra?.['resource']),
      subresource: text(ra?.['subresource']),
      name: text(ra?.['name']),
    }
    const fieldSelector = isPlainObject(ra?.['fieldSelector']) ? text(ra['fieldSelector']['rawSelector']) : ''
    if (fieldSelector) attrs.fieldSelector = fieldSelector
    const d = await authorizer.authorize(attrs)
    return { allowed: d.decision === 'allow', reason: d.reason }
  }
}
