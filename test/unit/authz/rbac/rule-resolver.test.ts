/** Which rules apply to whom: subjects, namespaces, missing roles, and how the RBAC authorizer words its answers. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Authorizer, unionRulesFor } from '../../../../core/authz/authorizer.js'
import { onlyGarbageCollectorFieldsChange } from '../../../../core/authz/rbac/escalation.js'
import { rbacAuthorizer } from '../../../../core/authz/rbac/rbac-authorizer.js'
import { RbacIndex } from '../../../../core/authz/rbac/rbac-index.js'
import { RbacRuleResolver } from '../../../../core/authz/rbac/rule-resolver.js'
import type { KubeObject } from '../../../../core/machinery/object.js'

const GROUP = 'rbac.authorization.k8s.io'
const clusterRole = (name: string, resource: string): KubeObject => ({
  kind: 'ClusterRole',
  apiVersion: `${GROUP}/v1`,
  metadata: { name },
  rules: [{ verbs: ['get'], apiGroups: [''], resources: [resource] }],
})
const bindingTo = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, namespace: string | undefined, role: string, subjects: Record<string, string>[]): KubeObject => ({
  kind,
  apiVersion: `${GROUP}/v1`,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: role },
  subjects,
})

const index = RbacIndex.of([
  clusterRole('pods', 'pods'),
  clusterRole('secrets', 'secrets'),
  bindingTo('ClusterRoleBinding', 'ops-pods', undefined, 'pods', [{ kind: 'Group', name: 'ops', apiGroup: GROUP }]),
  bindingTo('RoleBinding', 'sa-secrets', 'team-a', 'secrets', [{ kind: 'ServiceAccount', name: 'builder' }]),
  bindingTo('RoleBinding', 'other-sa', 'team-a', 'secrets', [{ kind: 'ServiceAccount', name: 'deployer', namespace: 'team-b' }]),
  bindingTo('ClusterRoleBinding', 'sa-without-namespace', undefined, 'secrets', [{ kind: 'ServiceAccount', name: 'builder' }]),
  bindingTo('RoleBinding', 'dangling', 'team-a', 'missing', [{ kind: 'User', name: 'carol', apiGroup: GROUP }]),
])
const resolver = new RbacRuleResolver(index)
const get = (user: { username: string; groups: string[] }, resource: string, namespace: string) =>
  rbacAuthorizer(resolver).authorize({ user, verb: 'get', isResourceRequest: true, path: '', namespace, apiGroup: '', apiVersion: 'v1', resource, subresource: '', name: 'x' })

describe('RBAC rule resolution', () => {
  it('binds a group\'s members cluster-wide and names the binding in the reason', async () => {
    assert.deepEqual(await get({ username: 'dan', groups: ['ops'] }, 'pods', 'anywhere'), {
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "ops-pods" of ClusterRole "pods" to Group "ops"',
    })
    assert.equal((await get({ username: 'ops', groups: [] }, 'pods', 'anywhere')).decision, 'no-opinion')
  })

  it('reads a ServiceAccount subject without a namespace as one in the binding\'s namespace', async () => {
    const builder = { username: 'system:serviceaccount:team-a:builder', groups: [] }
    assert.deepEqual(await get(builder, 'secrets', 'team-a'), {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "sa-secrets/team-a" of ClusterRole "secrets" to ServiceAccount "builder/team-a"',
    })
    assert.equal((await get({ username: 'system:serviceaccount:team-b:builder', groups: [] }, 'secrets', 'team-a')).decision, 'no-opinion')
    // In a ClusterRoleBinding a service account needs its namespace: without one it matches nobody.
    assert.equal((await get(builder, 'secrets', 'team-b')).decision, 'no-opinion')
  })

  it('honours a ServiceAccount subject\'s own namespace over the binding\'s', async () => {
    assert.equal((await get({ username: 'system:serviceaccount:team-b:deployer', groups: [] }, 'secrets', 'team-a')).decision, 'allow')
    assert.equal((await get({ username: 'system:serviceaccount:team-a:deployer', groups: [] }, 'secrets', 'team-a')).decision, 'no-opinion')
  })

  it('has no opinion, never a denial, and gives the missing role as the reason', async () => {
    assert.deepEqual(await get({ username: 'carol', groups: [] }, 'pods', 'team-a'), {
      decision: 'no-opinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found',
    })
    assert.deepEqual(await get({ username: 'nobody', groups: [] }, 'pods', 'team-a'), { decision: 'no-opinion', reason: '' })
  })

  it('words a missing role as the registry does for the escalation checks', () => {
    const registryWorded = new RbacRuleResolver(index, 'registry')
    assert.deepEqual(registryWorded.roleReferenceRules({ apiGroup: GROUP, kind: 'Role', name: 'gone' }, 'team-a'), {
      error: 'roles.rbac.authorization.k8s.io "gone" not found',
      missing: { resource: 'roles', name: 'gone' },
    })
  })

  it('forgets a binding once removed', async () => {
    const live = RbacIndex.of([clusterRole('pods', 'pods'), bindingTo('ClusterRoleBinding', 'b', undefined, 'pods', [{ kind: 'User', name: 'eve', apiGroup: GROUP }])])
    const eve = { username: 'eve', groups: [] }
    const ask = () => rbacAuthorizer(new RbacRuleResolver(live)).authorize({ user: eve, verb: 'get', isResourceRequest: true, path: '', namespace: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', name: '' })
    assert.equal((await ask()).decision, 'allow')
    live.remove('ClusterRoleBinding', { metadata: { name: 'b' } })
    assert.equal((await ask()).decision, 'no-opinion')
  })
})

describe('the RBAC index', () => {
  const eve = { username: 'eve', groups: ['auditors'] }
  const names = (index: RbacIndex, namespace: string) => index.bindingsNaming(eve, namespace).map((b) => b.name)

  it('finds the bindings naming a user or its groups, oldest first, each once', () => {
    const index = RbacIndex.of([
      bindingTo('RoleBinding', 'by-group', 'n', 'pods', [{ kind: 'Group', name: 'auditors', apiGroup: GROUP }]),
      bindingTo('RoleBinding', 'by-both', 'n', 'pods', [{ kind: 'User', name: 'eve', apiGroup: GROUP }, { kind: 'Group', name: 'auditors', apiGroup: GROUP }]),
      bindingTo('RoleBinding', 'by-name', 'n', 'pods', [{ kind: 'User', name: 'eve', apiGroup: GROUP }]),
      bindingTo('RoleBinding', 'someone-else', 'n', 'pods', [{ kind: 'User', name: 'mallory', apiGroup: GROUP }]),
      bindingTo('RoleBinding', 'elsewhere', 'm', 'pods', [{ kind: 'User', name: 'eve', apiGroup: GROUP }]),
    ])
    assert.deepEqual(names(index, 'n'), ['by-group', 'by-both', 'by-name'])
    assert.deepEqual(names(index, ''), [])
  })

  it('follows a binding whose subjects change, and a fresh list that replaces all', () => {
    const index = RbacIndex.of([bindingTo('ClusterRoleBinding', 'b', undefined, 'pods', [{ kind: 'User', name: 'eve', apiGroup: GROUP }])])
    assert.deepEqual(names(index, ''), ['b'])
    index.put('ClusterRoleBinding', bindingTo('ClusterRoleBinding', 'b', undefined, 'pods', [{ kind: 'User', name: 'mallory', apiGroup: GROUP }]))
    assert.deepEqual(names(index, ''), [])
    index.replace('ClusterRoleBinding', [bindingTo('ClusterRoleBinding', 'c', undefined, 'pods', [{ kind: 'Group', name: 'auditors', apiGroup: GROUP }])])
    assert.deepEqual(names(index, ''), ['c'])
    index.replace('ClusterRoleBinding', [])
    assert.deepEqual(names(index, ''), [])
  })
})

describe('rules of several modes', () => {
  it('are incomplete when a mode cannot list its rules, and carry the evaluation errors', async () => {
    const rbac = rbacAuthorizer(resolver)
    const listsNothing: Authorizer = { authorize: async () => ({ decision: 'no-opinion', reason: '' }) }
    const rules = await unionRulesFor([rbac, listsNothing], { username: 'carol', groups: ['ops'] }, 'team-a')
    assert.deepEqual(rules, {
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: 'clusterrole.rbac.authorization.k8s.io "missing" not found',
    })
  })
})

describe('updates the escalation checks let through', () => {
  const stored: KubeObject = { kind: 'Role', apiVersion: `${GROUP}/v1`, metadata: { name: 'r', namespace: 'n', resourceVersion: '5' }, rules: [{ verbs: ['get'] }] }
  it('are those changing only owner references, finalizers and deletion marks', () => {
    const gc = structuredClone(stored)
    gc.metadata.finalizers = ['example.com/hold']
    gc.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u' }]
    assert.equal(onlyGarbageCollectorFieldsChange(gc, stored), true)
  })

  it('are not those changing rules or labels, nor creates', () => {
    const labelled = structuredClone(stored)
    labelled.metadata.labels = { a: 'b' }
    assert.equal(onlyGarbageCollectorFieldsChange(labelled, stored), false)
    assert.equal(onlyGarbageCollectorFieldsChange({ ...stored, rules: [] }, stored), false)
    assert.equal(onlyGarbageCollectorFieldsChange(stored, undefined), false)
  })
})
