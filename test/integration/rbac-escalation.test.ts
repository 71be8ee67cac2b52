/**
 * Privilege-escalation prevention: a user may write a role only with the
 * permissions it grants (or `escalate`), a binding only with the bound
 * role's permissions (or `bind`); a refusal is upstream's 403 and leaves
 * nothing stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import type { TestClient } from './harness.js'
import { adminCreate, as, binding, grant, RBAC, rbacServer, role, subject } from './rbac-fixtures.js'

const ROLES = `${RBAC}/namespaces/team-a/roles`
const BINDINGS = `${RBAC}/namespaces/team-a/rolebindings`
const GROUPS = '["dev" "system:authenticated"]'

describe('writing roles', () => {
  let api: TestClient
  before(async () => {
    api = await rbacServer()
    await grant(api, 'alice', 'role-writer', [
      { verbs: ['create', 'update', 'get'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] },
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] },
    ], 'team-a')
  })

  it('lets a user create a role granting only what the user holds', async () => {
    const r = await api.post(ROLES, role('pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]), as('alice'))
    assert.equal(r.status, 201, r.text)
  })

  it('refuses a role granting more, listing what is missing, and stores nothing', async () => {
    const wanted = role('too-much', [
      { verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] },
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
    ])
    const r = await api.post(ROLES, wanted, as('alice'))
    assert.equal(r.status, 403, r.text)
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        `roles.rbac.authorization.k8s.io "too-much" is forbidden: user "alice" (groups=${GROUPS}) is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}\n' +
        '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}',
      reason: 'Forbidden',
      details: { name: 'too-much', group: 'rbac.authorization.k8s.io', kind: 'roles' },
      code: 403,
    })
    assert.equal((await api.get(`${ROLES}/too-much`)).status, 404)
  })

  it('refuses an update that adds a permission not held, and keeps the stored role', async () => {
    const stored = await api.get(`${ROLES}/pod-reader`)
    const changed = { ...stored.body, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }] }
    const r = await api.put(`${ROLES}/pod-reader`, changed, as('alice'))
    assert.equal(r.status, 403, r.text)
    assert.match(r.body.message, /^roles\.rbac\.authorization\.k8s\.io "pod-reader" is forbidden: user "alice" .*\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["\*"\]\}$/)
    assert.deepEqual((await api.get(`${ROLES}/pod-reader`)).body.rules, stored.body.rules)
  })

  it('refuses a dry run the same way', async () => {
    const r = await api.post(`${ROLES}?dryRun=All`, role('dry', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]), as('alice'))
    assert.equal(r.status, 403)
  })

  it('lets the user grant more once allowed to escalate roles', async () => {
    await grant(api, 'alice', 'role-escalator', [{ verbs: ['escalate'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] }], 'team-a')
    const r = await api.post(ROLES, role('too-much', [{ verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]), as('alice'))
    assert.equal(r.status, 201, r.text)
  })

  it('lets a member of system:masters write any role', async () => {
    const r = await api.post(`${RBAC}/clusterroles`, role('everything', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]), as('root'))
    assert.equal(r.status, 201, r.text)
  })
})

describe('escalate limited to names', () => {
  // Upstream asks `escalate` with the name its request info has: none for a POST, the URL's for a PUT or an apply.
  const POWERFUL = [{ verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['secrets'] }]
  let api: TestClient
  before(async () => {
    api = await rbacServer()
    await grant(api, 'carol', 'named-escalator', [
      { verbs: ['create', 'update', 'patch', 'get'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] },
      { verbs: ['escalate'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: ['named'] },
    ], 'team-a')
  })

  it('do not cover a POST, which names nothing in its URL; nothing is stored', async () => {
    const r = await api.post(ROLES, role('named', POWERFUL), as('carol'))
    assert.equal(r.status, 403, r.text)
    assert.equal((await api.get(`${ROLES}/named`)).status, 404)
  })

  it('cover a PUT that creates the role the URL names, and no other', async () => {
    const other = await api.put(`${ROLES}/other`, role('other', POWERFUL), as('carol'))
    assert.equal(other.status, 403, other.text)
    assert.equal((await api.get(`${ROLES}/other`)).status, 404)
    const r = await api.put(`${ROLES}/named`, role('named', POWERFUL), as('carol'))
    assert.equal(r.status, 201, r.text)
  })

  it('cover an apply that creates the role the URL names, and no other', async () => {
    const apply = (name: string) =>
      api.patch(`${ROLES}/${name}?fieldManager=carol`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', ...role(name, POWERFUL) }, 'application/apply-patch+yaml', as('carol'))
    await api.delete(`${ROLES}/named`)
    const other = await apply('other-applied')
    assert.equal(other.status, 403, other.text)
    assert.equal((await api.get(`${ROLES}/other-applied`)).status, 404)
    const r = await apply('named')
    assert.equal(r.status, 201, r.text)
  })
})

describe('writing cluster roles', () => {
  it('needs * on everything to set an aggregationRule, even with no rules', async () => {
    const api = await rbacServer()
    await grant(api, 'bob', 'clusterrole-writer', [{ verbs: ['create'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'] }])
    const aggregated = { metadata: { name: 'monitoring' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] } }
    const r = await api.post(`${RBAC}/clusterroles`, aggregated, as('bob'))
    assert.equal(r.status, 403, r.text)
    assert.equal(r.body.message, 'clusterroles.rbac.authorization.k8s.io "monitoring" is forbidden: must have cluster-admin privileges to use the aggregationRule')
    assert.equal((await api.get(`${RBAC}/clusterroles/monitoring`)).status, 404)
  })
})

describe('writing bindings', () => {
  let api: TestClient
  before(async () => {
    api = await rbacServer()
    await adminCreate(api, `${RBAC}/clusterroles`, role('secret-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }]))
    await adminCreate(api, `${RBAC}/clusterroles`, role('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]))
    await grant(api, 'alice', 'binder', [
      { verbs: ['create', 'get', 'update'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'] },
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
    ], 'team-a')
  })

  it('lets a user bind a role whose permissions the user holds', async () => {
    const r = await api.post(BINDINGS, binding('bob-pods', { kind: 'ClusterRole', name: 'pod-reader' }, [subject('User', 'bob')]), as('alice'))
    assert.equal(r.status, 201, r.text)
  })

  it('refuses to bind a role with permissions the user lacks, and stores nothing', async () => {
    const r = await api.post(BINDINGS, binding('bob-secrets', { kind: 'ClusterRole', name: 'secret-reader' }, [subject('User', 'bob')]), as('alice'))
    assert.equal(r.status, 403, r.text)
    assert.equal(
      r.body.message,
      `rolebindings.rbac.authorization.k8s.io "bob-secrets" is forbidden: user "alice" (groups=${GROUPS}) is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    )
    assert.deepEqual(r.body.details, { name: 'bob-secrets', group: 'rbac.authorization.k8s.io', kind: 'rolebindings' })
    assert.equal((await api.get(`${BINDINGS}/bob-secrets`)).status, 404)
  })

  it('answers 404 for a binding to a role that does not exist', async () => {
    const r = await api.post(BINDINGS, binding('ghost', { kind: 'ClusterRole', name: 'nope' }, [subject('User', 'bob')]), as('alice'))
    assert.equal(r.status, 404, r.text)
    assert.equal(r.body.message, 'clusterroles.rbac.authorization.k8s.io "nope" not found')
    assert.equal((await api.get(`${BINDINGS}/ghost`)).status, 404)
  })

  it('lets the user bind exactly the roles it may bind', async () => {
    await grant(api, 'alice', 'bind-secret-reader', [
      { verbs: ['bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['secret-reader'] },
    ], 'team-a')
    const allowed = await api.post(BINDINGS, binding('bob-secrets', { kind: 'ClusterRole', name: 'secret-reader' }, [subject('User', 'bob')]), as('alice'))
    assert.equal(allowed.status, 201, allowed.text)
    // `bind` on one role does not extend to another.
    await adminCreate(api, `${RBAC}/clusterroles`, role('node-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }]))
    const other = await api.post(BINDINGS, binding('bob-nodes', { kind: 'ClusterRole', name: 'node-reader' }, [subject('User', 'bob')]), as('alice'))
    assert.equal(other.status, 403, other.text)
  })

  it('refuses a ClusterRoleBinding to a user holding the role\'s rules only in one namespace', async () => {
    await grant(api, 'bob', 'crb-writer', [{ verbs: ['create'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterrolebindings'] }])
    const r = await api.post(`${RBAC}/clusterrolebindings`, binding('bob-pods-everywhere', { kind: 'ClusterRole', name: 'pod-reader' }, [subject('User', 'bob')]), as('bob'))
    assert.equal(r.status, 403, r.text)
    assert.match(r.body.message, /^clusterrolebindings\.rbac\.authorization\.k8s\.io "bob-pods-everywhere" is forbidden: user "bob" \(groups=\["ops" "system:authenticated"\]\)/)
    assert.equal((await api.get(`${RBAC}/clusterrolebindings/bob-pods-everywhere`)).status, 404)
  })
})

describe('escalation checks under AlwaysAllow', () => {
  it('let anyone write any role, since escalate is allowed to everyone', async () => {
    const api = await rbacServer(['AlwaysAllow'])
    const r = await api.post(ROLES, role('all', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]), as('alice'))
    assert.equal(r.status, 201, r.text)
  })
})
