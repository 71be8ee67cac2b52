/**
 * `--authorization-mode=RBAC` through `fetch`, as users of a token file:
 * what roles and bindings grant is allowed, everything else is a 403 in
 * upstream's words, and the access reviews answer from the same rules.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, type TestClient } from './harness.js'
import { adminCreate, as, binding, grant, RBAC, rbacServer, review, role, subject, untilAllowed } from './rbac-fixtures.js'

const PODS_A = '/api/v1/namespaces/team-a/pods'
const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })

describe('the RBAC authorizer', () => {
  let api: TestClient
  before(async () => {
    api = await rbacServer()
  })

  it('refuses a user no binding names with upstream\'s 403, and stores nothing', async () => {
    const list = await api.get(PODS_A, as('alice'))
    assert.equal(list.status, 403)
    assert.deepEqual(list.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    })
    const create = await api.post(PODS_A, pod('sneaky'), as('alice'))
    assert.equal(create.status, 403)
    assert.equal((await api.get(`${PODS_A}/sneaky`)).status, 404)
  })

  it('allows what a Role bound in the namespace grants, there and nowhere else', async () => {
    await grant(api, 'alice', 'pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], 'team-a')
    assert.equal((await api.get(PODS_A, as('alice'))).status, 200)
    assert.equal((await api.get(`${PODS_A}/absent`, as('alice'))).status, 404)
    const elsewhere = await api.get('/api/v1/namespaces/team-b/pods', as('alice'))
    assert.equal(elsewhere.status, 403)
    assert.equal(elsewhere.body.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"')
    const create = await api.post(PODS_A, pod('p1'), as('alice'))
    assert.equal(create.status, 403)
    assert.equal(create.body.message, 'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "team-a"')
    assert.equal((await api.get(`${PODS_A}/p1`)).status, 404)
    // Other users are not helped by alice's binding.
    assert.equal((await api.get(PODS_A, as('bob'))).status, 403)
  })

  it('limits a rule with resourceNames to those objects, never to a list or a create', async () => {
    for (const name of ['shared', 'private']) await adminCreate(api, '/api/v1/namespaces/team-a/configmaps', { metadata: { name }, data: { a: name } })
    await grant(api, 'bob', 'shared-config', [{ verbs: ['get', 'update', 'list', 'create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['shared'] }], 'team-a')
    const configmaps = '/api/v1/namespaces/team-a/configmaps'
    assert.equal((await api.get(`${configmaps}/shared`, as('bob'))).status, 200)
    const other = await api.get(`${configmaps}/private`, as('bob'))
    assert.equal(other.status, 403)
    assert.equal(other.body.message, 'configmaps "private" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "team-a"')
    assert.equal((await api.get(configmaps, as('bob'))).status, 403)
    assert.equal((await api.post(configmaps, { metadata: { name: 'shared2' } }, as('bob'))).status, 403)
    assert.equal((await api.get(`${configmaps}/shared2`)).status, 404)
  })

  it('gives a watch of one named object that object alone, by the legacy path and by a field selector', async () => {
    const secrets = '/api/v1/namespaces/team-a/secrets'
    for (const name of ['allowed', 'topsecret']) await adminCreate(api, secrets, { metadata: { name }, stringData: { value: name } })
    await grant(api, 'bob', 'one-secret', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['secrets'], resourceNames: ['allowed'] }], 'team-a')
    const watched = async (path: string) => {
      const r = await api.get(path, as('bob'))
      return { status: r.status, names: r.text.split('\n').filter(Boolean).map((line) => JSON.parse(line).object?.metadata?.name), body: r.body }
    }
    // timeoutSeconds ends each watch after the events of what exists.
    const legacy = await watched('/api/v1/watch/namespaces/team-a/secrets/allowed?timeoutSeconds=1')
    assert.deepEqual(legacy, { status: 200, names: ['allowed'], body: legacy.body })
    const selected = await watched(`${secrets}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dallowed`)
    assert.deepEqual(selected.names, ['allowed'])
    const same = await watched('/api/v1/watch/namespaces/team-a/secrets/allowed?timeoutSeconds=1&fieldSelector=metadata.name%3Dallowed')
    assert.deepEqual(same.names, ['allowed'])
    // A selector that names another object beside the path's name is refused, as upstream refuses it.
    for (const selector of ['metadata.name%3Dtopsecret', 'metadata.name!%3Dallowed', 'metadata.namespace%3Dteam-a']) {
      const other = await api.get(`/api/v1/watch/namespaces/team-a/secrets/allowed?timeoutSeconds=1&fieldSelector=${selector}`, as('bob'))
      assert.equal(other.status, 400, `${selector}: ${other.text}`)
      assert.equal(other.body.message, "fieldSelector metadata.name doesn't match requested name")
    }
    assert.equal((await api.get('/api/v1/watch/namespaces/team-a/secrets/topsecret?timeoutSeconds=1', as('bob'))).status, 403)
    assert.equal((await api.get(`${secrets}?watch=1&timeoutSeconds=1`, as('bob'))).status, 403)
  })

  it('grants through a ClusterRoleBinding to a group every member of it, cluster-wide', async () => {
    await adminCreate(api, `${RBAC}/clusterroles`, role('namespace-viewer', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] }]))
    await adminCreate(api, `${RBAC}/clusterrolebindings`, binding('ops-view-namespaces', { kind: 'ClusterRole', name: 'namespace-viewer' }, [subject('Group', 'ops')]))
    await untilAllowed(api, 'bob', { verb: 'list', resource: 'namespaces' })
    assert.equal((await api.get('/api/v1/namespaces', as('bob'))).status, 200)
    assert.equal((await api.get('/api/v1/namespaces/team-b', as('bob'))).status, 200)
    assert.equal((await api.get('/api/v1/namespaces', as('alice'))).status, 403)
  })

  it('binds a ServiceAccount subject without a namespace in the binding\'s own namespace', async () => {
    await adminCreate(api, `${RBAC}/clusterroles`, role('secret-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }]))
    await adminCreate(api, `${RBAC}/namespaces/team-a/rolebindings`, binding('builder-secrets', { kind: 'ClusterRole', name: 'secret-reader' }, [subject('ServiceAccount', 'builder')]))
    await untilAllowed(api, 'builder', { verb: 'list', resource: 'secrets', namespace: 'team-a' })
    assert.equal((await api.get('/api/v1/namespaces/team-a/secrets', as('builder'))).status, 200)
    // A ClusterRole bound by a RoleBinding grants only in that namespace.
    const elsewhere = await api.get('/api/v1/namespaces/team-b/secrets', as('builder'))
    assert.equal(elsewhere.status, 403)
    assert.equal(elsewhere.body.message, 'secrets is forbidden: User "system:serviceaccount:team-a:builder" cannot list resource "secrets" in API group "" in the namespace "team-b"')
  })

  it('matches subresources by name and by */subresource, and URLs by their trailing *', async () => {
    await grant(api, 'bob', 'status-and-health', [
      { verbs: ['get'], apiGroups: ['*'], resources: ['*/status'] },
      { verbs: ['get'], nonResourceURLs: ['/healthz/*', '/version'] },
    ])
    assert.equal((await api.get('/api/v1/namespaces/team-b/pods/none/status', as('bob'))).status, 404)
    assert.equal((await api.get('/api/v1/namespaces/team-b/pods/none', as('bob'))).status, 403)
    assert.equal((await api.get('/version', as('bob'))).status, 200)
    assert.equal((await api.get('/healthz/ping', as('bob'))).status, 200)
    const bare = await api.get('/healthz', as('bob'))
    assert.equal(bare.status, 403)
    assert.equal(bare.body.message, 'forbidden: User "bob" cannot get path "/healthz"')
  })

  it('asks for create as well when an apply would create the object, and stores nothing without it', async () => {
    const secrets = '/api/v1/namespaces/team-a/secrets'
    await grant(api, 'carol', 'secret-patcher', [{ verbs: ['get', 'patch'], apiGroups: [''], resources: ['secrets', 'pods'] }], 'team-a')
    const apply = (name: string, query = '') =>
      api.patch(`${secrets}/${name}?fieldManager=carol${query}`, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { a: 'b' } }), 'application/apply-patch+yaml', as('carol'))
    for (const query of ['', '&dryRun=All']) {
      const refused = await apply('planted', query)
      assert.equal(refused.status, 403, refused.text)
      assert.deepEqual(
        { reason: refused.body.reason, message: refused.body.message, details: refused.body.details },
        { reason: 'Forbidden', message: 'secrets "planted" is forbidden: ', details: { name: 'planted', kind: 'secrets' } },
      )
    }
    assert.equal((await api.get(`${secrets}/planted`)).status, 404)
    const podApply = await api.patch(
      '/api/v1/namespaces/team-a/pods/planted?fieldManager=carol',
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'planted' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }),
      'application/apply-patch+yaml',
      as('carol'),
    )
    assert.equal(podApply.status, 403)
    // An existing object is patched by apply with patch alone; with create granted too, an apply creates.
    await adminCreate(api, secrets, { metadata: { name: 'present' }, stringData: { a: 'a' } })
    assert.equal((await apply('present')).status, 200)
    await grant(api, 'carol', 'secret-creator', [{ verbs: ['create'], apiGroups: [''], resources: ['secrets'] }], 'team-a')
    await untilAllowed(api, 'carol', { verb: 'create', resource: 'secrets', namespace: 'team-a' })
    assert.equal((await apply('planted')).status, 201)
  })

  it('gives as the reason of a refusal the role a binding names but that does not exist', async () => {
    await adminCreate(api, `${RBAC}/namespaces/team-b/rolebindings`, binding('dangling', { kind: 'ClusterRole', name: 'missing' }, [subject('User', 'alice')]))
    const expected =
      'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b": RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found'
    await eventually('the dangling binding is seen', async () => (await api.get('/api/v1/namespaces/team-b/pods', as('alice'))).body.message === expected)
  })

  it('answers SubjectAccessReviews from the same rules, with the binding that allowed', async () => {
    assert.deepEqual(await review(api, 'alice', { verb: 'get', resource: 'pods', namespace: 'team-a' }), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "pod-reader/team-a" of Role "pod-reader" to User "alice"',
    })
    assert.deepEqual(await review(api, 'builder', { verb: 'get', resource: 'secrets', namespace: 'team-a' }), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "builder-secrets/team-a" of ClusterRole "secret-reader" to ServiceAccount "builder/team-a"',
    })
    assert.deepEqual(await review(api, 'alice', { verb: 'delete', resource: 'pods', namespace: 'team-a' }), { allowed: false })
    const local = await api.post('/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews', {
      spec: { user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } },
    })
    assert.equal(local.body.status.allowed, true)
  })

  it('lists the caller\'s rules in a SelfSubjectRulesReview, complete under RBAC alone', async () => {
    await grant(api, 'alice', 'self-review', [{ verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectrulesreviews', 'selfsubjectaccessreviews'] }])
    const r = await api.post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'team-a' } }, as('alice'))
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.spec, {})
    assert.deepEqual(r.body.status, {
      resourceRules: [
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectrulesreviews', 'selfsubjectaccessreviews'] },
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      ],
      nonResourceRules: [],
      incomplete: false,
    })
    const noNamespace = await api.post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: {} }, as('alice'))
    assert.equal(noNamespace.status, 400)
    assert.equal(noNamespace.body.message, 'no namespace on request')
  })

  it('answers a SelfSubjectAccessReview for the caller', async () => {
    const ask = (verb: string) => ({ spec: { resourceAttributes: { verb, resource: 'pods', namespace: 'team-a' } } })
    const yes = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ask('list'), as('alice'))
    assert.equal(yes.status, 201, yes.text)
    assert.equal(yes.body.status.allowed, true)
    const no = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ask('delete'), as('alice'))
    assert.equal(no.body.status.allowed, false)
  })
})

describe('RBAC beside other modes', () => {
  it('lets system:masters through before the chain, but lists no rules for it that no mode grants', async () => {
    const api = await rbacServer(['RBAC', 'AlwaysDeny'])
    const admin = await api.post(PODS_A, pod('by-root'), as('root'))
    assert.equal(admin.status, 201, admin.text)
    const r = await api.post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'team-a' } }, as('root'))
    assert.equal(r.status, 201, r.text)
    // system:masters is allowed before the chain, but is no mode: RBAC and AlwaysDeny list nothing for root.
    assert.deepEqual(r.body.status, { resourceRules: [], nonResourceRules: [], incomplete: false })
  })
})
