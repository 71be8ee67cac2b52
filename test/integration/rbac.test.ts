/**
 * Roles, cluster roles and their bindings through the API: what is stored
 * after the defaults, what is refused (and not stored), what an update may
 * not change.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const RBAC = '/apis/rbac.authorization.k8s.io/v1'
const ROLES = `${RBAC}/namespaces/default/roles`
const CLUSTER_ROLES = `${RBAC}/clusterroles`
const BINDINGS = `${RBAC}/namespaces/default/rolebindings`
const CLUSTER_BINDINGS = `${RBAC}/clusterrolebindings`
const GROUP = 'rbac.authorization.k8s.io'

let client: TestClient

before(async () => {
  client = await startServer()
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

describe('roles', () => {
  it('stores a role, reads it back, updates its rules and deletes it', async () => {
    const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]
    const created = await client.post(ROLES, { metadata: { name: 'pod-reader' }, rules })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual((await client.get(`${ROLES}/pod-reader`)).body.rules, rules)
    const more = [...rules, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }]
    const updated = await client.put(`${ROLES}/pod-reader`, { ...created.body, rules: more })
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual((await client.get(`${ROLES}/pod-reader`)).body.rules, more)
    assert.equal((await client.delete(`${ROLES}/pod-reader`)).status, 200)
    assert.equal((await client.get(`${ROLES}/pod-reader`)).status, 404)
  })

  it('refuses a role with non-resource URLs or a rule without verbs, and stores nothing', async () => {
    const res = await client.post(ROLES, { metadata: { name: 'bad' }, rules: [{ nonResourceURLs: ['/metrics'] }] })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: namespaced rules cannot apply to non-resource URLs',
    ])
    assert.equal((await client.get(`${ROLES}/bad`)).status, 404)
  })

  it('refuses an update that breaks a rule', async () => {
    const created = await client.post(ROLES, { metadata: { name: 'r2' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] })
    const res = await client.put(`${ROLES}/r2`, { ...created.body, rules: [{ apiGroups: [''], verbs: ['get'] }] })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), ['rules[0].resources: Required value: resource rules must supply at least one resource'])
    assert.deepEqual((await client.get(`${ROLES}/r2`)).body.rules[0].resources, ['pods'])
  })
})

describe('cluster roles', () => {
  it('stores path-segment names with colons and non-resource URLs', async () => {
    const res = await client.post(CLUSTER_ROLES, { metadata: { name: 'system:metrics' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] })
    assert.equal(res.status, 201, res.text)
    assert.equal((await client.get(`${CLUSTER_ROLES}/system:metrics`)).status, 200)
  })

  it('refuses an aggregation rule without selectors, or with a broken one', async () => {
    const empty = await client.post(CLUSTER_ROLES, { metadata: { name: 'agg' }, aggregationRule: {} })
    assert.equal(empty.status, 422)
    assert.deepEqual(causes(empty.body), [
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ])
    const broken = await client.post(CLUSTER_ROLES, {
      metadata: { name: 'agg' },
      aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }] },
    })
    assert.deepEqual(causes(broken.body), [
      "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
    ])
    assert.equal((await client.get(`${CLUSTER_ROLES}/agg`)).status, 404)
  })
})

describe('role bindings', () => {
  it('fills the groups of the roleRef and of user and group subjects', async () => {
    const res = await client.post(BINDINGS, {
      metadata: { name: 'readers' },
      roleRef: { kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' }],
    })
    assert.equal(res.status, 201, res.text)
    const read = await client.get(`${BINDINGS}/readers`)
    assert.deepEqual(read.body.roleRef, { apiGroup: GROUP, kind: 'Role', name: 'pod-reader' })
    assert.deepEqual(read.body.subjects, [
      { kind: 'User', name: 'alice', apiGroup: GROUP },
      { kind: 'Group', name: 'devs', apiGroup: GROUP },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
    ])
  })

  it('refuses a binding without a role or with an unknown subject kind, and stores nothing', async () => {
    const res = await client.post(BINDINGS, { metadata: { name: 'broken' }, subjects: [{ kind: 'Robot', name: 'r2d2' }] })
    assert.equal(res.status, 422)
    assert.equal(res.body.reason, 'Invalid')
    assert.deepEqual(causes(res.body), [
      'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ])
    assert.equal((await client.get(`${BINDINGS}/broken`)).status, 404)
  })

  it('lets an update change the subjects, never the role', async () => {
    const created = await client.post(BINDINGS, { metadata: { name: 'fixed' }, roleRef: { kind: 'Role', name: 'a' }, subjects: [] })
    const more = await client.put(`${BINDINGS}/fixed`, { ...created.body, subjects: [{ kind: 'User', name: 'bob' }] })
    assert.equal(more.status, 200, more.text)
    assert.deepEqual(more.body.subjects, [{ kind: 'User', name: 'bob', apiGroup: GROUP }])
    const moved = await client.patch(`${BINDINGS}/fixed`, { roleRef: { name: 'b' } }, 'application/merge-patch+json')
    assert.equal(moved.status, 422)
    assert.equal(
      moved.body.message,
      'RoleBinding.rbac.authorization.k8s.io "fixed" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot change roleRef',
    )
    assert.equal((await client.get(`${BINDINGS}/fixed`)).body.roleRef.name, 'a')
    assert.equal((await client.delete(`${BINDINGS}/fixed`)).status, 200)
    assert.equal((await client.get(`${BINDINGS}/fixed`)).status, 404)
  })
})

describe('cluster role bindings', () => {
  it('grants only cluster roles, to service accounts named with their namespace', async () => {
    const res = await client.post(CLUSTER_BINDINGS, {
      metadata: { name: 'wrong' },
      roleRef: { apiGroup: GROUP, kind: 'Role', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
    })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'subjects[0].namespace: Required value',
    ])
    assert.equal((await client.get(`${CLUSTER_BINDINGS}/wrong`)).status, 404)
    const ok = await client.post(CLUSTER_BINDINGS, {
      metadata: { name: 'right' },
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'default' }],
    })
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.body.roleRef.apiGroup, GROUP)
  })
})
