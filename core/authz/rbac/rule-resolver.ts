/**
 * Which rules apply to a user in a namespace (upstream's DefaultRuleResolver):
 * those of every ClusterRoleBinding naming the user, one of its groups or its
 * service account, then, in a namespace, those of the RoleBindings there. A
 * binding whose role is missing contributes an error instead, which is the
 * reason a denial carries.
 */
import type { UserInfo } from '../../machinery/object.js'
import type { PolicyRule } from './policy-rule.js'
import type { Binding, RbacObjects, RoleRef, Subject } from './rbac-index.js'

const RBAC_GROUP = 'rbac.authorization.k8s.io'

/** The binding and subject a rule came through, for the reason of an allow. */
export interface RuleSource {
  readonly binding: Binding
  readonly subject: Subject
}

/** Called per rule, or per error; returning false stops the visit. */
export type RuleVisitor = (source: RuleSource | undefined, rule: PolicyRule | undefined, error: string | undefined) => boolean

/** A role reference that resolves to nothing: which role, and the message. */
export interface MissingRole {
  readonly resource: 'roles' | 'clusterroles'
  readonly name: string
}

export type RoleRefRules = { rules: readonly PolicyRule[] } | { error: string; missing?: MissingRole }

/**
 * How a missing role is worded: the authorizer reads informer-style caches
 * (`clusterrole.rbac.authorization.k8s.io "x" not found`), the escalation
 * check the registry (`clusterroles.rbac.authorization.k8s.io "x" not found`).
 */
export type MissingRoleWording = 'cache' | 'registry'

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`
  return `${s.kind} ${JSON.stringify(s.name)}`
}

// Indexed bindings never change (a change replaces them), so each subject's description is written once.
const descriptions = new WeakMap<Subject, string>()

/** `ClusterRoleBinding "admins" of ClusterRole "admin" to Group "ops"`, as upstream describes where a rule came from. */
export function describeSource({ binding, subject }: RuleSource): string {
  let text = descriptions.get(subject)
  if (text === undefined) {
    const ref = `${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)}`
    text = binding.namespace
      ? `RoleBinding ${JSON.stringify(`${binding.name}/${binding.namespace}`)} of ${ref} to ${describeSubject(subject, binding.namespace)}`
      : `ClusterRoleBinding ${JSON.stringify(binding.name)} of ${ref} to ${describeSubject(subject, '')}`
    descriptions.set(subject, text)
  }
  return text
}

/** Whether a binding's subject is this user; a service account without a namespace is in the binding's. */
export function subjectApplies(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name
    case 'Group':
      return user.groups.includes(s.name)
    case 'ServiceAccount': {
      const namespace = s.namespace || bindingNamespace
      return namespace !== '' && user.username === `system:serviceaccount:${namespace}:${s.name}`
    }
    default:
      return false
  }
}

function appliesTo(user: UserInfo, binding: Binding): Subject | undefined {
  return binding.subjects.find((s) => subjectApplies(user, s, binding.namespace))
}

export class RbacRuleResolver {
  constructor(
    private readonly objects: RbacObjects,
    private readonly wording: MissingRoleWording = 'cache',
  ) {}

  /** The rules of the role a binding in `namespace` (empty: a ClusterRoleBinding) grants. */
  roleReferenceRules(ref: RoleRef, namespace: string): RoleRefRules {
    const found = ref.kind === 'Role' ? this.objects.role(namespace, ref.name) : ref.kind === 'ClusterRole' ? this.objects.clusterRole(ref.name) : undefined
    if (found) return { rules: found }
    if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') return { error: `unsupported role reference kind: ${JSON.stringify(ref.kind)}` }
    const resource = ref.kind === 'Role' ? 'roles' : 'clusterroles'
    const shown = this.wording === 'registry' ? resource : ref.kind.toLowerCase()
    return { error: `${shown}.${RBAC_GROUP} ${JSON.stringify(ref.name)} not found`, missing: { resource, name: ref.name } }
  }

  /** Visits the rules that apply to `user` in `namespace`, cluster-wide ones first. */
  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    const scopes = [this.objects.bindingsNaming(user, '')]
    if (namespace) scopes.push(this.objects.bindingsNaming(user, namespace))
    for (const bindings of scopes) {
      for (const binding of bindings) {
        const subject = appliesTo(user, binding)
        if (!subject) continue
        const resolved = this.roleReferenceRules(binding.roleRef, binding.namespace)
        if ('error' in resolved) {
          if (!visit(undefined, undefined, resolved.error)) return
          continue
        }
        const source = { binding, subject }
        for (const rule of resolved.rules) if (!visit(source, rule, undefined)) return
      }
    }
  }

  /** Every rule that applies, and the errors met finding them (the rules found still hold: RBAC only adds). */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = []
    const errors: string[] = []
    this.visitRulesFor(user, namespace, (_source, rule, error) => {
      if (rule) rules.push(rule)
      if (error) errors.push(error)
      return true
    })
    return { rules, errors }
  }
}

/** Several errors as Go's aggregate error prints them: one alone, several `[a, b]`, repeats once. */
export function aggregateErrors(errors: readonly string[]): string {
  const unique = [...new Set(errors)]
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`
}
