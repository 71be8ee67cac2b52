/**
 * Privilege-escalation prevention for roles and bindings, as upstream's
 * policy-based rbac storage does it: nobody grants what they do not hold.
 *
 * - A Role or ClusterRole is written by a member of system:masters, by a
 *   user allowed to `escalate` it, or by a user whose own rules cover every
 *   rule it holds. An aggregationRule (which can gather anything) needs
 *   `*` on everything.
 * - A RoleBinding or ClusterRoleBinding is written by a member of
 *   system:masters, by a user allowed to `bind` the role it references, or
 *   by a user whose own rules cover that role's.
 * - An update that only changes what the garbage collector changes
 *   (owner references, finalizers, deletion marks) is not checked.
 *
 * A refusal is a 403 naming the object and the permissions missing; nothing
 * is stored.
 */
import { forbidden, notFound } from '../../machinery/status-error.js'
import { isPlainObject, type KubeObject, type UserInfo } from '../../machinery/object.js'
import { type Attributes, type Authorizer, PRIVILEGED_GROUP } from '../authorizer.js'
import { describeMissingRules, uncoveredRules } from './covers.js'
import { type PolicyRule, policyRuleOf, policyRulesOf } from './policy-rule.js'
import type { RoleRef } from './rbac-index.js'
import { aggregateErrors, type RbacRuleResolver } from './rule-resolver.js'

const RBAC_GROUP = 'rbac.authorization.k8s.io'

/** What the checks ask: the server's whole authorizer chain, and the rules roles and bindings give. */
export interface WriteAuthorization {
  readonly authorizer: Authorizer
  /** The resolver over the current roles and bindings (worded as the registry words a missing role), once loaded. */
  rbacRules(): Promise<RbacRuleResolver>
}

/** What the checks know of the write they run in: who writes, and the authorization to check them against (absent: nothing is checked). */
export interface WriteContext {
  readonly user: UserInfo
  readonly authorization?: WriteAuthorization
  /** The name the request's URL gives; absent for a POST. */
  readonly urlName?: string
}

export type RoleResource = 'roles' | 'clusterroles'
export type BindingResource = 'rolebindings' | 'clusterrolebindings'

/** `*` on every resource and every URL: what an aggregationRule needs. */
const FULL_AUTHORITY: readonly PolicyRule[] = [
  policyRuleOf({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }),
  policyRuleOf({ verbs: ['*'], nonResourceURLs: ['*'] }),
]

const GC_METADATA = ['ownerReferences', 'finalizers', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'resourceVersion'] as const

/** Whether an update changes nothing but what the garbage collector changes (upstream's IsOnlyMutatingGCFields). */
export function onlyGarbageCollectorFieldsChange(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return false
  const strip = (o: KubeObject): unknown => {
    const metadata: Record<string, unknown> = { ...o.metadata }
    for (const field of GC_METADATA) delete metadata[field]
    return { ...o, metadata }
  }
  return sameValue(strip(obj), strip(old))
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, i) => sameValue(v, b[i]))
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  return [...keys].every((k) => sameValue(a[k], b[k]))
}

async function allowed(authorization: WriteAuthorization, attrs: Omit<Attributes, 'isResourceRequest' | 'path' | 'apiVersion'>): Promise<boolean> {
  const decision = await authorization.authorizer.authorize({ ...attrs, isResourceRequest: true, path: '', apiVersion: '*' })
  return decision.decision === 'allow'
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
const goQuotedList = (values: readonly string[]): string => `[${values.map((v) => JSON.stringify(v)).join(' ')}]`

/**
 * Upstream's ConfirmNoEscalation: the writer's own rules in `namespace` must
 * cover `rules`; otherwise the message lists what is missing.
 */
export async function missingPermissions(authorization: WriteAuthorization, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): Promise<string | undefined> {
  const resolver = await authorization.rbacRules()
  const own = resolver.rulesFor(user, namespace)
  const missing = uncoveredRules(own.rules, rules)
  if (missing.length === 0) return undefined
  const head = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:`
  const tail = own.errors.length ? `; resolution errors: [${aggregateErrors(own.errors)}]` : ''
  return `${head}\n${describeMissingRules(missing).join('\n')}${tail}`
}

function isPrivileged(user: UserInfo): boolean {
  return user.groups.includes(PRIVILEGED_GROUP)
}

function hasAggregationRule(role: KubeObject | undefined): boolean {
  const rule = role?.['aggregationRule']
  return isPlainObject(rule) && Array.isArray(rule['clusterRoleSelectors']) && rule['clusterRoleSelectors'].length > 0
}

/** Refuses a Role or ClusterRole the writer may not grant. `old` is the stored object an update replaces. */
export async function checkRoleWrite(resource: RoleResource, obj: KubeObject, old: KubeObject | undefined, ctx: WriteContext): Promise<void> {
  const authorization = ctx.authorization
  if (!authorization || isPrivileged(ctx.user) || onlyGarbageCollectorFieldsChange(obj, old)) return
  const name = obj.metadata.name ?? ''
  const namespace = obj.metadata.namespace ?? ''
  // The name the request's URL gives, as upstream's request info has it: a POST names nothing, so `escalate`
  // limited to names never covers one; a PUT or an apply that creates the role names it.
  const escalate = { user: ctx.user, verb: 'escalate', apiGroup: RBAC_GROUP, resource, subresource: '', namespace, name: old ? name : (ctx.urlName ?? '') }
  if (await allowed(authorization, escalate)) return
  const gr = { group: RBAC_GROUP, resource }
  const missing = await missingPermissions(authorization, ctx.user, namespace, policyRulesOf(obj['rules']))
  if (missing) throw forbidden(gr, name, missing)
  if (resource === 'clusterroles' && (hasAggregationRule(obj) || hasAggregationRule(old))) {
    if (await missingPermissions(authorization, ctx.user, namespace, FULL_AUTHORITY))
      throw forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule')
  }
}

function roleRefOf(binding: KubeObject): RoleRef {
  const ref = isPlainObject(binding['roleRef']) ? binding['roleRef'] : {}
  const text = (v: unknown): string => (typeof v === 'string' ? v : '')
  return { apiGroup: text(ref['apiGroup']), kind: text(ref['kind']), name: text(ref['name']) }
}

/** Refuses a RoleBinding or ClusterRoleBinding granting a role the writer may not bind. */
export async function checkBindingWrite(resource: BindingResource, obj: KubeObject, old: KubeObject | undefined, ctx: WriteContext): Promise<void> {
  const authorization = ctx.authorization
  if (!authorization || isPrivileged(ctx.user) || onlyGarbageCollectorFieldsChange(obj, old)) return
  const name = obj.metadata.name ?? ''
  const namespace = obj.metadata.namespace ?? ''
  const ref = roleRefOf(obj)
  // `bind` is asked where the binding is written, so that it can be delegated per namespace.
  const roleResource = ref.kind === 'Role' ? 'roles' : ref.kind === 'ClusterRole' ? 'clusterroles' : undefined
  if (roleResource) {
    const bind = { user: ctx.user, verb: 'bind', apiGroup: ref.apiGroup, resource: roleResource, subresource: '', namespace, name: ref.name }
    if (await allowed(authorization, bind)) return
  }
  const resolved = (await authorization.rbacRules()).roleReferenceRules(ref, namespace)
  if ('error' in resolved) {
    if (resolved.missing) throw notFound({ group: RBAC_GROUP, resource: resolved.missing.resource }, resolved.missing.name)
    // A kind of role that does not exist grants nothing: validation refuses the binding next (422).
    return
  }
  const missing = await missingPermissions(authorization, ctx.user, namespace, resolved.rules)
  if (missing) throw forbidden({ group: RBAC_GROUP, resource }, name, missing)
}
