/**
 * Roles, cluster roles and their bindings held in memory, read once per
 * object as it arrives (rules parsed, subjects and role references kept), so
 * that a decision reads no storage and parses nothing (upstream's RBAC
 * authorizer reads informer caches the same way). Bindings are also indexed
 * by the user names and groups their subjects name, so that a decision
 * looks at the bindings that may concern the user instead of all of them.
 */
import { isPlainObject, type KubeObject, type UserInfo } from '../../machinery/object.js'
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
  /**
   * The bindings in `namespace` (empty: the ClusterRoleBindings) with a
   * subject naming the user's name or one of its groups, oldest first. The
   * caller still checks which subject applies.
   */
  bindingsNaming(user: UserInfo, namespace: string): readonly Binding[]
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

  *all(): Iterable<T> {
    for (const names of this.byNamespace.values()) yield* names.values()
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

/** Where a subject is found: under a user name (service accounts by theirs) or a group; nowhere for one that names nobody. */
function subjectKey(s: Subject, bindingNamespace: string): readonly ['user' | 'group', string] | undefined {
  switch (s.kind) {
    case 'User':
      return ['user', s.name]
    case 'Group':
      return ['group', s.name]
    case 'ServiceAccount': {
      // A service account named without a namespace is in the binding's; in a ClusterRoleBinding it names nobody.
      const namespace = s.namespace || bindingNamespace
      return namespace ? ['user', `system:serviceaccount:${namespace}:${s.name}`] : undefined
    }
    default:
      return undefined
  }
}

/** Sets of bindings by a name, that go when empty. */
class SetsByName {
  private readonly byName = new Map<string, Set<IndexedBinding>>()

  get(name: string): Set<IndexedBinding> | undefined {
    return this.byName.get(name)
  }

  add(name: string, b: IndexedBinding): void {
    let set = this.byName.get(name)
    if (!set) this.byName.set(name, (set = new Set()))
    set.add(b)
  }

  delete(name: string, b: IndexedBinding): void {
    const set = this.byName.get(name)
    set?.delete(b)
    if (set?.size === 0) this.byName.delete(name)
  }
}

/**
 * The bindings of one scope (a namespace, or the cluster) by the user names
 * and groups of their subjects. Looked up by the request's own strings, so
 * that a decision builds no key.
 */
class BindingsBySubject {
  private readonly users = new SetsByName()
  private readonly groups = new SetsByName()
  size = 0

  add(b: IndexedBinding): void {
    this.size++
    for (const [kind, name] of b.keys) (kind === 'user' ? this.users : this.groups).add(name, b)
  }

  delete(b: IndexedBinding): void {
    this.size--
    for (const [kind, name] of b.keys) (kind === 'user' ? this.users : this.groups).delete(name, b)
  }

  naming(user: UserInfo): readonly Binding[] {
    // Most users are named by few bindings: gather without a set unless several names found some.
    const found: IndexedBinding[] = []
    let sources = 0
    const byName = this.users.get(user.username)
    if (byName) {
      sources++
      for (const b of byName) found.push(b)
    }
    for (const group of user.groups) {
      const byGroup = this.groups.get(group)
      if (!byGroup) continue
      sources++
      for (const b of byGroup) found.push(b)
    }
    if (sources <= 1) return found
    // A binding may name the user and a group of it: once each, in the order they came, as one list would.
    return [...new Set(found)].sort((a, b) => a.seq - b.seq)
  }
}

function uniqueKeys(keys: readonly (readonly ['user' | 'group', string] | undefined)[]): (readonly ['user' | 'group', string])[] {
  const seen = new Set<string>()
  const out: (readonly ['user' | 'group', string])[] = []
  for (const key of keys) {
    if (!key || seen.has(`${key[0]}:${key[1]}`)) continue
    seen.add(`${key[0]}:${key[1]}`)
    out.push(key)
  }
  return out
}

interface IndexedBinding extends Binding {
  readonly keys: readonly (readonly ['user' | 'group', string])[]
  readonly seq: number
}

export class RbacIndex implements RbacObjects {
  private readonly roles = new Namespaced<readonly PolicyRule[]>()
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>()
  /** Every binding by namespace and name ('' for ClusterRoleBindings, kept apart by kind). */
  private readonly bindings = new Namespaced<IndexedBinding>()
  private readonly clusterBindings = new Map<string, IndexedBinding>()
  /** The bindings of each namespace by subject; '' holds the ClusterRoleBindings. */
  private readonly bySubject = new Map<string, BindingsBySubject>()
  private seq = 0

  role(namespace: string, name: string): readonly PolicyRule[] | undefined {
    return this.roles.get(namespace, name)
  }

  clusterRole(name: string): readonly PolicyRule[] | undefined {
    return this.clusterRoles.get(name)
  }

  bindingsNaming(user: UserInfo, namespace: string): readonly Binding[] {
    return this.bySubject.get(namespace)?.naming(user) ?? []
  }

  private addBinding(obj: KubeObject, cluster: boolean): void {
    const plain = bindingOf(obj)
    const scope = cluster ? '' : plain.namespace
    const keys = uniqueKeys(plain.subjects.map((s) => subjectKey(s, scope)))
    const b: IndexedBinding = { ...plain, namespace: scope, keys, seq: this.seq++ }
    this.removeBinding(plain.namespace, plain.name, cluster)
    if (cluster) this.clusterBindings.set(b.name, b)
    else this.bindings.set(scope, b.name, b)
    let subjects = this.bySubject.get(scope)
    if (!subjects) this.bySubject.set(scope, (subjects = new BindingsBySubject()))
    subjects.add(b)
  }

  private removeBinding(namespace: string, name: string, cluster: boolean): void {
    const scope = cluster ? '' : namespace
    const old = cluster ? this.clusterBindings.get(name) : this.bindings.get(scope, name)
    if (!old) return
    if (cluster) this.clusterBindings.delete(name)
    else this.bindings.delete(scope, name)
    const subjects = this.bySubject.get(scope)
    subjects?.delete(old)
    if (subjects?.size === 0) this.bySubject.delete(scope)
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
        return this.addBinding(obj, false)
      case 'ClusterRoleBinding':
        return this.addBinding(obj, true)
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
        return this.removeBinding(namespace, name, false)
      case 'ClusterRoleBinding':
        return this.removeBinding('', name, true)
    }
  }

  /** Forgets every object of `kind` and holds `objects` instead (a fresh list after a watch broke). */
  replace(kind: RbacKind, objects: readonly KubeObject[]): void {
    if (kind === 'Role') this.roles.clear()
    else if (kind === 'ClusterRole') this.clusterRoles.clear()
    else if (kind === 'RoleBinding') for (const b of [...this.bindings.all()]) this.removeBinding(b.namespace, b.name, false)
    else for (const name of [...this.clusterBindings.keys()]) this.removeBinding('', name, true)
    for (const obj of objects) this.put(kind, obj)
  }

  /** An index of exactly these objects (tests, and resolution over a fixed set). */
  static of(objects: readonly KubeObject[]): RbacIndex {
    const index = new RbacIndex()
    for (const obj of objects) index.put(obj.kind as RbacKind, obj)
    return index
  }
}
