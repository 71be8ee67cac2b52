/**
 * Roles, cluster roles and their bindings held in memory, read once per
 * object as it arrives (rules parsed, subjects and role references kept), so
 * that a decision reads no storage and parses nothing (upstream's RBAC
 * authorizer reads informer caches the same way).
 */
import { isPlainObject, type KubeObject } from '../../resources/object.js'
import { type PolicyRule, policyRulesOf } from './policy-rule.js'

export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding'

export interface RoleRef {
  readonly apiGroup: string
  readonly kind: string
  readonly name: string
}

export interface Subject {
  readonly kind: string
  readonly apiGroup: string
  readonly name: string
  readonly namespace: string
}

export interface Binding {
  readonly name: string
  /** Empty for a ClusterRoleBinding. */
  readonly namespace: string
  readonly roleRef: RoleRef
  readonly subjects: readonly Subject[]
}

/** What rule resolution reads: upstream's role getters and binding listers. */
export interface RbacObjects {
  role(namespace: string, name: string): readonly PolicyRule[] | undefined
  clusterRole(name: string): readonly PolicyRule[] | undefined
  roleBindings(namespace: string): Iterable<Binding>
  clusterRoleBindings(): Iterable<Binding>
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

function bindingOf(obj: KubeObject): Binding {
  const ref = isPlainObject(obj['roleRef']) ? obj['roleRef'] : {}
  const subjects = Array.isArray(obj['subjects']) ? obj['subjects'] : []
  return {
    name: obj.metadata.name ?? '',
    namespace: obj.metadata.namespace ?? '',
    roleRef: { apiGroup: text(ref['apiGroup']), kind: text(ref['kind']), name: text(ref['name']) },
    subjects: subjects.filter(isPlainObject).map((s) => ({
      kind: text(s['kind']),
      apiGroup: text(s['apiGroup']),
      name: text(s['name']),
      namespace: text(s['namespace']),
    })),
  }
}

/** A map of maps: namespace, then name. */
class Namespaced<T> {
  private readonly byNamespace = new Map<string, Map<string, T>>()

  get(namespace: string, name: string): T | undefined {
    return this.byNamespace.get(namespace)?.get(name)
  }

  values(namespace: string): Iterable<T> {
    return this.byNamespace.get(namespace)?.values() ?? []
  }

  set(namespace: string, name: string, value: T): void {
    let names = this.byNamespace.get(namespace)
    if (!names) this.byNamespace.set(namespace, (names = new Map()))
    names.set(name, value)
  }

  delete(namespace: string, name: string): void {
    const names = this.byNamespace.get(namespace)
    names?.delete(name)
    if (names?.size === 0) this.byNamespace.delete(namespace)
  }

  clear(): void {
    this.byNamespace.clear()
  }
}

export class RbacIndex implements RbacObjects {
  private readonly roles = new Namespaced<readonly PolicyRule[]>()
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>()
  private readonly bindings = new Namespaced<Binding>()
  private readonly clusterBindings = new Map<string, Binding>()

  role(namespace: string, name: string): readonly PolicyRule[] | undefined {
    return this.roles.get(namespace, name)
  }

  clusterRole(name: string): readonly PolicyRule[] | undefined {
    return this.clusterRoles.get(name)
  }

  roleBindings(namespace: string): Iterable<Binding> {
    return this.bindings.values(namespace)
  }

  clusterRoleBindings(): Iterable<Binding> {
    return this.clusterBindings.values()
  }

  /** Adds or replaces one object. */
  put(kind: RbacKind, obj: KubeObject): void {
    const name = obj.metadata.name ?? ''
    const namespace = obj.metadata.namespace ?? ''
    switch (kind) {
      case 'Role':
        return this.roles.set(namespace, name, policyRulesOf(obj['rules']))
      case 'ClusterRole':
        return void this.clusterRoles.set(name, policyRulesOf(obj['rules']))
      case 'RoleBinding':
        return this.bindings.set(namespace, name, bindingOf(obj))
      case 'ClusterRoleBinding':
        return void this.clusterBindings.set(name, bindingOf(obj))
    }
  }

  remove(kind: RbacKind, obj: KubeObject): void {
    const name = obj.metadata.name ?? ''
    const namespace = obj.metadata.namespace ?? ''
    switch (kind) {
      case 'Role':
        return this.roles.delete(namespace, name)
      case 'ClusterRole':
        return void this.clusterRoles.delete(name)
      case 'RoleBinding':
        return this.bindings.delete(namespace, name)
      case 'ClusterRoleBinding':
        return void this.clusterBindings.delete(name)
    }
  }

  /** Forgets every object of `kind` and holds `objects` instead (a fresh list after a watch broke). */
  replace(kind: RbacKind, objects: readonly KubeObject[]): void {
    if (kind === 'Role') this.roles.clear()
    else if (kind === 'ClusterRole') this.clusterRoles.clear()
    else if (kind === 'RoleBinding') this.bindings.clear()
    else this.clusterBindings.clear()
    for (const obj of objects) this.put(kind, obj)
  }

  /** An index of exactly these objects (tests, and resolution over a fixed set). */
  static of(objects: readonly KubeObject[]): RbacIndex {
    const index = new RbacIndex()
    for (const obj of objects) index.put(obj.kind as RbacKind, obj)
    return index
  }
}
