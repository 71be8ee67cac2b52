/**
 * Upstream's default RBAC policy, created and reconciled at start as
 * kube-apiserver's `rbac/bootstrap-roles` post-start hook does: a missing
 * role or binding is created; one annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "true"` (or not annotated)
 * gets what it lacks added and keeps whatever else it holds; one annotated
 * `"false"` is left as it is. The policy is data, generated from upstream's
 * golden files (core/resources/rbac/generated/bootstrap-policy.ts).
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import type { ResourceObjects, StoredResources } from './stored-resources.js'
import { namespaces } from '../resources/core/namespaces.js'
import { clusterRoleBindings, clusterRoles, roleBindings, roles } from '../resources/groups/rbac.js'
import { cloneJson, type KubeObject } from '../machinery/object.js'
import type { BootstrapBinding, BootstrapRole } from '../resources/rbac/bootstrap-policy-types.js'
import {
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  BOOTSTRAP_CLUSTER_ROLES,
  BOOTSTRAP_ROLE_BINDINGS,
  BOOTSTRAP_ROLES,
} from '../resources/rbac/generated/bootstrap-policy.js'
import { reconcileBinding, reconcileRole, type ReconcileResult } from '../resources/rbac/reconcile.js'
import { primeAggregatedClusterRoles, primeSplitClusterRoleBindings } from './rbac-bootstrap-migrations.js'
import { type PostStartHook, postStartHook } from './post-start-hook.js'

/** The post-start hook's name; its health check is `poststarthook/<name>`. */
export const RBAC_BOOTSTRAP_HOOK = 'rbac/bootstrap-roles'

/** The manager upstream's writes are recorded under: its loopback client's user agent. */
const FIELD_MANAGER = 'kube-apiserver'

// A write that lost a race (the object changed or appeared meanwhile) is reconciled again, this often.
const ATTEMPTS = 5

// Objects reconciled at once.
const WRITERS = 8

export interface RbacStores {
  clusterRoles: ResourceObjects
  clusterRoleBindings: ResourceObjects
  roles: ResourceObjects
  roleBindings: ResourceObjects
  namespaces: ResourceObjects | undefined
}

/** The four stores, or undefined when rbac.authorization.k8s.io/v1 is not served (`--runtime-config`). */
export function rbacStores(resources: StoredResources): RbacStores | undefined {
  const lookup = (e: { group: string; version: string; resource: string }) => resources.catalogue.lookup(e.group, e.version, e.resource)
  const entries = [clusterRoles, clusterRoleBindings, roles, roleBindings].map(lookup)
  if (entries.some((e) => e === undefined)) return undefined
  const [cr, crb, r, rb] = entries.map((e) => resources.store(e!))
  const ns = lookup(namespaces)
  return { clusterRoles: cr!, clusterRoleBindings: crb!, roles: r!, roleBindings: rb!, namespaces: ns && resources.store(ns) }
}

/** The hook, or undefined when the RBAC API is not served: upstream installs it with that API. */
export function rbacBootstrapHook(resources: StoredResources, now: () => Date, logger: Logger): PostStartHook | undefined {
  const stores = rbacStores(resources)
  if (!stores) return undefined
  return postStartHook(RBAC_BOOTSTRAP_HOOK, () => ensureBootstrapPolicy(stores, now, logger), logger)
}

function roleObject(apiVersion: string, kind: string, role: BootstrapRole): KubeObject {
  const obj: KubeObject = { apiVersion, kind, metadata: structuredClone(role.metadata) }
  if (role.aggregationRule) obj['aggregationRule'] = structuredClone(role.aggregationRule)
  if (role.rules.length > 0) obj['rules'] = structuredClone(role.rules)
  return obj
}

function bindingObject(apiVersion: string, kind: string, binding: BootstrapBinding): KubeObject {
  const obj: KubeObject = { apiVersion, kind, metadata: structuredClone(binding.metadata), roleRef: structuredClone(binding.roleRef) }
  if (binding.subjects.length > 0) obj['subjects'] = structuredClone(binding.subjects)
  return obj
}

/**
 * Creates and reconciles every object of the policy, in upstream's order:
 * cluster roles, cluster role bindings, roles, role bindings. One object
 * that cannot be written is logged and the others still go ahead, as upstream.
 */
export async function ensureBootstrapPolicy(stores: RbacStores, now: () => Date, logger: Logger): Promise<void> {
  const ctx = (): DirectWriteContext => ({ user: ADMIN_IDENTITY, now: now(), dryRun: false, fieldManager: FIELD_MANAGER })
  // Policies of older releases kept in other objects move first (upstream does this before reconciling).
  await primeAggregatedClusterRoles(stores.clusterRoles, ctx, logger)
  await primeSplitClusterRoleBindings(stores.clusterRoleBindings, BOOTSTRAP_CLUSTER_ROLE_BINDINGS, ctx, logger)

  const rbacApiVersion = `${clusterRoles.group}/${clusterRoles.version}`
  const work: Array<{ store: ResourceObjects; expected: KubeObject; reconcile: typeof reconcileRole }> = [
    ...BOOTSTRAP_CLUSTER_ROLES.map((r) => ({ store: stores.clusterRoles, expected: roleObject(rbacApiVersion, 'ClusterRole', r), reconcile: reconcileRole })),
    ...BOOTSTRAP_CLUSTER_ROLE_BINDINGS.map((b) => ({
      store: stores.clusterRoleBindings,
      expected: bindingObject(rbacApiVersion, 'ClusterRoleBinding', b),
      reconcile: reconcileBinding,
    })),
    ...BOOTSTRAP_ROLES.map((r) => ({ store: stores.roles, expected: roleObject(rbacApiVersion, 'Role', r), reconcile: reconcileRole })),
    ...BOOTSTRAP_ROLE_BINDINGS.map((b) => ({ store: stores.roleBindings, expected: bindingObject(rbacApiVersion, 'RoleBinding', b), reconcile: reconcileBinding })),
  ]
  // One list per kind tells what is stored; an object is read again only when a write races.
  const kinds = [stores.clusterRoles, stores.clusterRoleBindings, stores.roles, stores.roleBindings]
  const listed = await Promise.all(kinds.map((store) => storedNow(store)))
  const stored = new Map(kinds.map((store, i) => [store, new Map(listed[i]!.map((obj) => [objectKey(obj), obj]))]))
  // Each namespace is looked for (and made) once per run, not once per role in it: kube-system has a dozen.
  const namespacesEnsured = new Map<string, Promise<void>>()
  const ensureNamespaceOnce = (namespace: string): Promise<void> => {
    let ensured = namespacesEnsured.get(namespace)
    if (!ensured) {
      ensured = ensureNamespace(stores, namespace, ctx)
      // A failure is not remembered: the next role in the namespace tries again.
      ensured.catch(() => namespacesEnsured.delete(namespace))
      namespacesEnsured.set(namespace, ensured)
    }
    return ensured
  }
  const reconcileItem = async ({ store, expected, reconcile }: (typeof work)[number]): Promise<void> => {
    const what = `${store.entry.resource}.${store.entry.group}/${expected.metadata.name ?? ''}`
    try {
      const known = stored.get(store)?.get(objectKey(expected))
      const result = await reconcileOne(store, expected, reconcile, ctx, known, ensureNamespaceOnce)
      if (result.protected && result.operation !== 'none')
        logger.warn({ object: what, missing: result.added }, 'skipped reconcile-protected object with missing permissions')
      else if (result.operation === 'update') logger.debug({ module: 'rbac-bootstrap-roles', object: what, added: result.added }, 'updated with additional permissions')
      else if (result.operation === 'create' || result.operation === 'recreate') logger.debug({ module: 'rbac-bootstrap-roles', object: what }, 'created')
    } catch (err) {
      logger.error({ object: what, err: String(err) }, 'unable to reconcile')
    }
  }
  // The objects are independent of one another: a few writes at a time keep a first start short.
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < work.length) await reconcileItem(work[next++]!)
  }
  await Promise.all(Array.from({ length: WRITERS }, worker))
}

async function reconcileOne(
  store: ResourceObjects,
  expected: KubeObject,
  reconcile: (stored: KubeObject | undefined, expected: KubeObject) => ReconcileResult,
  ctx: () => DirectWriteContext,
  listed: KubeObject | undefined,
  ensureNamespace: (namespace: string) => Promise<void>,
): Promise<ReconcileResult> {
  const namespace = expected.metadata.namespace ?? ''
  const name = expected.metadata.name ?? ''
  for (let attempt = 1; ; attempt++) {
    const stored = attempt === 1 ? listed : await getOrUndefined(store, namespace, name)
    const result = reconcile(stored, expected)
    if (result.protected || result.operation === 'none') return result
    // The object to write shares parts with the listed one, which is the watch cache's own (frozen), and the write path decodes in place.
    const object = cloneJson(result.object)
    try {
      if (result.operation === 'update') {
        await store.update(namespace, name, () => object, ctx())
        return result
      }
      if (result.operation === 'recreate' && stored) {
        const uid = stored.metadata.uid
        await store.delete(namespace, name, uid ? { preconditions: { uid } } : {}, ctx())
      }
      if (namespace) await ensureNamespace(namespace)
      await store.create(namespace, object, ctx())
      return result
    } catch (err) {
      // Written, created or deleted by someone else meanwhile: look again.
      const raced = hasStatusCode(err, 409) || hasStatusCode(err, 404)
      if (!raced || attempt >= ATTEMPTS) throw err
    }
  }
}

/**
 * Every object of a kind, from the watch cache as it holds them once it
 * loaded (resourceVersion "0"): a consistent read would first wait for the
 * cache to hear of the writes start-up is making to other resources, and a
 * read from the store itself decodes each object again beside the cache's
 * own load. Nobody else writes the policy's objects at start-up; if
 * another server does, the write that races is refused and that object is
 * read again, from the store (reconcileOne).
 */
const storedNow = async (store: ResourceObjects): Promise<readonly KubeObject[]> => (await store.storage.list(store.prefix(''), { resourceVersion: '0', readOnly: true })).items

function objectKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`
}

async function getOrUndefined(store: ResourceObjects, namespace: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await store.get(namespace, name)
  } catch (err) {
    if (hasStatusCode(err, 404)) return undefined
    throw err
  }
}

/** Roles live in kube-system and kube-public; upstream creates a missing namespace before the role. */
async function ensureNamespace(stores: RbacStores, namespace: string, ctx: () => DirectWriteContext): Promise<void> {
  if (!stores.namespaces || (await getOrUndefined(stores.namespaces, '', namespace))) return
  try {
    await stores.namespaces.create('', { metadata: { name: namespace } }, ctx())
  } catch (err) {
    if (!hasStatusCode(err, 409)) throw err
  }
}
