/**
 * Upstream's default RBAC policy, created and reconciled at start (the
 * `rbac/bootstrap-roles` post-start hook): every role and binding of the
 * policy stored with upstream's names, rules, labels and annotations;
 * reconciled on a restart (missing things added, extra ones kept, opted-out
 * objects untouched); absent when switched off or not served.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import type { BootstrapBinding, BootstrapRole } from '../../core/resources/rbac/bootstrap-policy-types.js'
import {
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  BOOTSTRAP_CLUSTER_ROLES,
  BOOTSTRAP_ROLE_BINDINGS,
  BOOTSTRAP_ROLES,
} from '../../core/resources/rbac/generated/bootstrap-policy.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { TestClient } from './harness.js'

const RBAC = '/apis/rbac.authorization.k8s.io/v1'
const HOOK_CHECK = 'poststarthook/rbac/bootstrap-roles'
const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate'
const AGGREGATED = new Set(['admin', 'edit', 'view'])

async function startOn(storage: MemoryStorage, options: ApiServerOptions = {}): Promise<TestClient> {
  // The aggregation controller writes too; these tests look at what the hook alone stores.
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, garbageCollector: false, clusterRoleAggregation: false, bootstrapRbacPolicy: true, ...options }, { storage })
  await server.ready
  return new TestClient(server)
}

function path(kind: 'clusterroles' | 'clusterrolebindings' | 'roles' | 'rolebindings', name: string, namespace?: string): string {
  return namespace ? `${RBAC}/namespaces/${namespace}/${kind}/${name}` : `${RBAC}/${kind}/${name}`
}

/** What a role of the policy must be stored as; an empty rules list is stored as none. */
function expectRole(stored: any, role: BootstrapRole, kind: string): void {
  const what = `${kind} ${role.metadata.name}`
  assert.equal(stored.kind, kind, what)
  assert.equal(stored.apiVersion, 'rbac.authorization.k8s.io/v1', what)
  assert.equal(stored.metadata.name, role.metadata.name, what)
  assert.equal(stored.metadata.namespace, role.metadata.namespace, what)
  assert.deepEqual(stored.metadata.labels, role.metadata.labels, what)
  assert.deepEqual(stored.metadata.annotations, role.metadata.annotations, what)
  assert.deepEqual(stored.rules ?? [], role.rules, what)
  assert.deepEqual(stored.aggregationRule, role.aggregationRule, what)
}

function expectBinding(stored: any, binding: BootstrapBinding, kind: string): void {
  const what = `${kind} ${binding.metadata.name}`
  assert.equal(stored.kind, kind, what)
  assert.equal(stored.metadata.name, binding.metadata.name, what)
  assert.equal(stored.metadata.namespace, binding.metadata.namespace, what)
  assert.deepEqual(stored.metadata.labels, binding.metadata.labels, what)
  assert.deepEqual(stored.metadata.annotations, binding.metadata.annotations, what)
  assert.deepEqual(stored.roleRef, binding.roleRef, what)
  assert.deepEqual(stored.subjects ?? [], binding.subjects, what)
}

const names = (list: any): string[] => list.body.items.map((i: any) => (i.metadata.namespace ? `${i.metadata.namespace}/` : '') + i.metadata.name).sort()
const policyNames = (objects: readonly { metadata: { name: string; namespace?: string } }[]): string[] =>
  objects.map((o) => (o.metadata.namespace ? `${o.metadata.namespace}/` : '') + o.metadata.name).sort()

/** The resourceVersion of every RBAC object, to tell whether a start wrote anything. */
async function versions(api: TestClient): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const kind of ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings']) {
    for (const item of (await api.get(`${RBAC}/${kind}`)).body.items) out.set(`${kind}/${item.metadata.namespace ?? ''}/${item.metadata.name}`, item.metadata.resourceVersion)
  }
  return out
}

describe('the default RBAC policy at start', () => {
  it('stores every role and binding of upstream’s policy, object by object, and nothing else', async () => {
    const api = await startOn(new MemoryStorage())
    assert.deepEqual(names(await api.get(`${RBAC}/clusterroles`)), policyNames(BOOTSTRAP_CLUSTER_ROLES))
    assert.deepEqual(names(await api.get(`${RBAC}/clusterrolebindings`)), policyNames(BOOTSTRAP_CLUSTER_ROLE_BINDINGS))
    assert.deepEqual(names(await api.get(`${RBAC}/roles`)), policyNames(BOOTSTRAP_ROLES))
    assert.deepEqual(names(await api.get(`${RBAC}/rolebindings`)), policyNames(BOOTSTRAP_ROLE_BINDINGS))
    for (const role of BOOTSTRAP_CLUSTER_ROLES) expectRole((await api.get(path('clusterroles', role.metadata.name))).body, role, 'ClusterRole')
    for (const binding of BOOTSTRAP_CLUSTER_ROLE_BINDINGS)
      expectBinding((await api.get(path('clusterrolebindings', binding.metadata.name))).body, binding, 'ClusterRoleBinding')
    for (const role of BOOTSTRAP_ROLES) expectRole((await api.get(path('roles', role.metadata.name, role.metadata.namespace))).body, role, 'Role')
    for (const binding of BOOTSTRAP_ROLE_BINDINGS)
      expectBinding((await api.get(path('rolebindings', binding.metadata.name, binding.metadata.namespace))).body, binding, 'RoleBinding')
    await api.server.shutdown()
  })

  it('holds upstream’s well-known roles: cluster-admin for system:masters, the aggregated ones, the controllers’', async () => {
    const api = await startOn(new MemoryStorage())
    const clusterAdmin = (await api.get(path('clusterroles', 'cluster-admin'))).body
    assert.deepEqual(clusterAdmin.rules, [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ])
    const binding = (await api.get(path('clusterrolebindings', 'cluster-admin'))).body
    assert.deepEqual(binding.subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' }])
    for (const name of AGGREGATED) {
      const role = (await api.get(path('clusterroles', name))).body
      assert.deepEqual(role.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${name}`]: 'true' } }] })
    }
    for (const name of ['system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:node', 'system:node-proxier', 'system:controller:clusterrole-aggregation-controller', 'system:service-account-issuer-discovery'])
      assert.equal((await api.get(path('clusterroles', name))).status, 200, name)
    await api.server.shutdown()
  })

  it('reports the post-start hook in /healthz, /livez and /readyz', async () => {
    const api = await startOn(new MemoryStorage())
    for (const endpoint of ['healthz', 'livez', 'readyz']) {
      const verbose = await api.get(`/${endpoint}?verbose`)
      assert.equal(verbose.status, 200)
      assert.match(verbose.text, new RegExp(`^\\[\\+\\]${HOOK_CHECK} ok$`, 'm'))
      const one = await api.get(`/${endpoint}/${HOOK_CHECK}`)
      assert.deepEqual([one.status, one.text], [200, 'ok'])
    }
    await api.server.shutdown()
  })

  it('writes nothing on a restart over its own policy', async () => {
    const storage = new MemoryStorage()
    const first = await startOn(storage)
    const before = await versions(first)
    await first.server.shutdown()
    const second = await startOn(storage)
    assert.deepEqual(await versions(second), before)
    await second.server.shutdown()
  })

  it('on a restart recreates what is missing, adds what autoupdate roles and bindings lack and keeps what they have besides', async () => {
    const storage = new MemoryStorage()
    const first = await startOn(storage)
    // A role that lost a rule and gained one, a label changed and one added.
    const role = (await first.get(path('clusterroles', 'system:node-proxier'))).body
    const expectedRules = BOOTSTRAP_CLUSTER_ROLES.find((r) => r.metadata.name === 'system:node-proxier')!.rules
    const extra = { verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] }
    role.rules = [...expectedRules.slice(1), extra]
    role.metadata.labels = { team: 'network' }
    assert.equal((await first.put(path('clusterroles', 'system:node-proxier'), role)).status, 200)
    // A binding that lost its subject and gained another.
    const binding = (await first.get(path('clusterrolebindings', 'system:node-proxier'))).body
    const ops = { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ops' }
    binding.subjects = [ops]
    assert.equal((await first.put(path('clusterrolebindings', 'system:node-proxier'), binding)).status, 200)
    // A namespaced role gone.
    assert.equal((await first.delete(path('roles', 'system:controller:token-cleaner', 'kube-system'))).status, 200)
    await first.server.shutdown()

    const second = await startOn(storage)
    const reconciled = (await second.get(path('clusterroles', 'system:node-proxier'))).body
    const missing = expectedRules[0]!
    // The missing rule comes back broken down to one resource and verb each, after what was stored.
    const pieces = missing.resources!.flatMap((resource) => missing.verbs.map((verb) => ({ verbs: [verb], apiGroups: missing.apiGroups, resources: [resource] })))
    assert.deepEqual(reconciled.rules, [...expectedRules.slice(1), extra, ...pieces])
    assert.deepEqual(reconciled.metadata.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults', team: 'network' })
    const reconciledBinding = (await second.get(path('clusterrolebindings', 'system:node-proxier'))).body
    assert.deepEqual(reconciledBinding.subjects, [ops, { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'system:kube-proxy' }])
    const recreated = await second.get(path('roles', 'system:controller:token-cleaner', 'kube-system'))
    assert.equal(recreated.status, 200)
    expectRole(recreated.body, BOOTSTRAP_ROLES.find((r) => r.metadata.name === 'system:controller:token-cleaner')!, 'Role')
    await second.server.shutdown()
  })

  it('leaves roles and bindings annotated autoupdate "false" as they are', async () => {
    const storage = new MemoryStorage()
    const first = await startOn(storage)
    const role = (await first.get(path('clusterroles', 'system:discovery'))).body
    role.metadata.annotations = { [AUTOUPDATE]: 'false' }
    role.rules = [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]
    const keptRole = await first.put(path('clusterroles', 'system:discovery'), role)
    assert.equal(keptRole.status, 200)
    const binding = (await first.get(path('clusterrolebindings', 'system:discovery'))).body
    binding.metadata.annotations = { [AUTOUPDATE]: 'false' }
    delete binding.subjects
    const keptBinding = await first.put(path('clusterrolebindings', 'system:discovery'), binding)
    assert.equal(keptBinding.status, 200)
    await first.server.shutdown()

    const second = await startOn(storage)
    const storedRole = (await second.get(path('clusterroles', 'system:discovery'))).body
    assert.equal(storedRole.metadata.resourceVersion, keptRole.body.metadata.resourceVersion)
    assert.deepEqual(storedRole.rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }])
    const storedBinding = (await second.get(path('clusterrolebindings', 'system:discovery'))).body
    assert.equal(storedBinding.metadata.resourceVersion, keptBinding.body.metadata.resourceVersion)
    assert.equal(storedBinding.subjects, undefined)
    await second.server.shutdown()
  })

  it('replaces a binding stored with another role, since a binding’s role cannot change', async () => {
    const storage = new MemoryStorage()
    const first = await startOn(storage)
    const key = '/registry/clusterrolebindings/system:kube-dns'
    const stored = await storage.get(key)
    await first.server.shutdown()
    // Written behind the API's back: the API refuses a changed roleRef.
    await storage.guaranteedUpdate(key, (current) => ({ ...current, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } }))

    const second = await startOn(storage)
    const replaced = (await second.get(path('clusterrolebindings', 'system:kube-dns'))).body
    assert.equal(replaced.roleRef.name, 'system:kube-dns')
    assert.notEqual(replaced.metadata.uid, stored?.metadata.uid)
    await second.server.shutdown()
  })

  it('creates nothing and lists no hook with bootstrapRbacPolicy: false', async () => {
    const storage = new MemoryStorage()
    const api = await startOn(storage, { bootstrapRbacPolicy: false })
    assert.deepEqual(names(await api.get(`${RBAC}/clusterroles`)), [])
    assert.doesNotMatch((await api.get('/readyz?verbose')).text, /rbac\/bootstrap-roles/)
    assert.equal((await api.get(`/readyz/${HOOK_CHECK}`)).status, 404)
    await api.server.shutdown()
  })

  it('starts without the hook when rbac.authorization.k8s.io/v1 is not served', async () => {
    const storage = new MemoryStorage()
    const api = await startOn(storage, { runtimeConfig: { 'rbac.authorization.k8s.io/v1': false } })
    assert.equal((await api.get('/readyz')).text, 'ok')
    assert.equal((await api.get(`/readyz/${HOOK_CHECK}`)).status, 404)
    assert.equal(await storage.count('/registry/clusterroles/'), 0)
    assert.equal(await storage.count('/registry/rolebindings/'), 0)
    await api.server.shutdown()
  })
})
