/**
 * The rbac group's validation against upstream's (pkg/apis/rbac/validation):
 * valid roles and bindings are stored (resource names across several
 * resources among them, and the authorizer honours them), invalid ones are
 * refused with upstream's messages and field paths, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ConnectionInfo } from '../../core/index.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const RBAC = '/apis/rbac.authorization.k8s.io/v1'
const ROLES = `${RBAC}/namespaces/default/roles`
const CLUSTER_ROLES = `${RBAC}/clusterroles`
const BINDINGS = `${RBAC}/namespaces/default/rolebindings`
const CLUSTER_BINDINGS = `${RBAC}/clusterrolebindings`
const GROUP = 'rbac.authorization.k8s.io'
const network: ConnectionInfo = {}

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) => (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

let api: TestClient
before(async () => {
  const server = createTestServer({ authentication: { tokens: [{ token: 'alice-token', user: { username: 'alice', groups: [] } }] }, authorizationModes: ['RBAC'] })
  await server.ready
  api = new TestClient(server)
})
after(() => api.server.shutdown())

describe('valid roles and bindings', () => {
  it('stores a role and a cluster role whose rule names resources by name across several resources (201)', async () => {
    const rule = { apiGroups: [''], resources: ['users', 'groups'], resourceNames: ['bob', 'readers'], verbs: ['impersonate'] }
    const role = await api.post(ROLES, { metadata: { name: 'impersonate-some' }, rules: [rule] })
    assert.equal(role.status, 201, role.text)
    assert.deepEqual((await api.get(`${ROLES}/impersonate-some`)).body.rules, [rule])
    const clusterRole = await api.post(CLUSTER_ROLES, { metadata: { name: 'impersonate-some' }, rules: [rule] })
    assert.equal(clusterRole.status, 201, clusterRole.text)
  })

  it('authorizes each named object of each resource of such a rule, and nothing else', async () => {
    const rule = { apiGroups: [''], resources: ['configmaps', 'secrets'], resourceNames: ['app-config', 'app-secret'], verbs: ['get'] }
    assert.equal((await api.post(ROLES, { metadata: { name: 'app-reader' }, rules: [rule] })).status, 201)
    const binding = { metadata: { name: 'alice-app-reader' }, roleRef: { apiGroup: GROUP, kind: 'Role', name: 'app-reader' }, subjects: [{ kind: 'User', name: 'alice' }] }
    assert.equal((await api.post(BINDINGS, binding)).status, 201)
    for (const [path, body] of [
      ['/api/v1/namespaces/default/configmaps', { metadata: { name: 'app-config' } }],
      ['/api/v1/namespaces/default/configmaps', { metadata: { name: 'other-config' } }],
      ['/api/v1/namespaces/default/secrets', { metadata: { name: 'app-secret' } }],
    ] as const)
      assert.equal((await api.post(path, body)).status, 201)
    const as = { connection: network, headers: { authorization: 'Bearer alice-token' } }
    // The authorizer sees the new binding through its watch.
    await eventually('the binding takes effect', async () => (await api.get('/api/v1/namespaces/default/configmaps/app-config', as)).status === 200)
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/app-secret', as)).status, 200)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/other-config', as)).status, 403)
    // Names and resources combine freely, as upstream's rule matching does: a secret of the other name is allowed too.
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/app-config', as)).status, 404)
    assert.equal((await api.get('/api/v1/namespaces/default/secrets/other-secret', as)).status, 403)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps', as)).status, 403)
  })

  it('stores cluster role aggregation, and bindings of each subject kind', async () => {
    const aggregated = { metadata: { name: 'aggregated' }, aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'example.com/agg', operator: 'Exists' }] }] } }
    assert.equal((await api.post(CLUSTER_ROLES, aggregated)).status, 201)
    const subjects = [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'system:authenticated' },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
    ]
    const binding = await api.post(BINDINGS, { metadata: { name: 'all-kinds' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects })
    assert.equal(binding.status, 201, binding.text)
    const clusterBinding = await api.post(CLUSTER_BINDINGS, { metadata: { name: 'all-kinds' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects })
    assert.equal(clusterBinding.status, 201, clusterBinding.text)
  })
})

describe('invalid roles and bindings', () => {
  const cases: { what: string; path: string; body: Record<string, unknown>; says: string[] }[] = [
    {
      what: 'a role rule without verbs, groups or resources',
      path: ROLES,
      body: { metadata: { name: 'bad-role' }, rules: [{ resourceNames: ['x'] }] },
      says: [
        'rules[0].verbs: Required value: verbs must contain at least one value',
        'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
        'rules[0].resources: Required value: resource rules must supply at least one resource',
      ],
    },
    {
      what: 'a role with non-resource URLs beside resources',
      path: ROLES,
      body: { metadata: { name: 'bad-role' }, rules: [{ nonResourceURLs: ['/healthz'], resources: ['pods'], verbs: ['get'] }] },
      says: [
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs',
      ],
    },
    {
      what: 'a cluster role with an empty aggregation rule',
      path: CLUSTER_ROLES,
      body: { metadata: { name: 'bad-cluster-role' }, aggregationRule: { clusterRoleSelectors: [] } },
      says: ['aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil'],
    },
    {
      what: 'a cluster role aggregating by a broken selector',
      path: CLUSTER_ROLES,
      body: { metadata: { name: 'bad-cluster-role' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'bad key!': 'x' } }] } },
      says: [
        'aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
        'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
      ],
    },
    {
      what: 'a role binding to an unknown kind of role with nameless subjects',
      path: BINDINGS,
      body: { metadata: { name: 'bad-binding' }, roleRef: { kind: 'Policy', name: 'a/b' }, subjects: [{ kind: 'User' }, { kind: 'Group', name: '' }, { kind: 'ServiceAccount', name: 'Bad_Name', apiGroup: GROUP }] },
      says: [
        'roleRef.kind: Unsupported value: "Policy": supported values: "Role", "ClusterRole"',
        'roleRef.name: Invalid value: "a/b": may not contain \'/\'',
        'subjects[0].name: Required value',
        'subjects[0].name: Invalid value: "": user name cannot be empty',
        'subjects[1].name: Required value',
        'subjects[1].name: Invalid value: "": group name cannot be empty',
        'subjects[2].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
        'subjects[2].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
      ],
    },
    {
      what: 'a cluster role binding to a role, a user of another group, a service account without namespace',
      path: CLUSTER_BINDINGS,
      body: {
        metadata: { name: 'bad-cluster-binding' },
        roleRef: { apiGroup: 'example.com', kind: 'Role', name: 'r' },
        subjects: [{ kind: 'User', name: 'u', apiGroup: 'example.com' }, { kind: 'ServiceAccount', name: 'sa' }],
      },
      says: [
        'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        'subjects[0].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'subjects[1].namespace: Required value',
      ],
    },
  ]
  for (const c of cases) {
    it(`refuses ${c.what} with 422 and upstream's messages, and stores nothing`, async () => {
      const reply = await api.post(c.path, c.body)
      assert.equal(reply.status, 422, reply.text)
      assert.equal(reply.body.reason, 'Invalid')
      assert.deepEqual(causes(reply.body), c.says)
      const name = (c.body['metadata'] as { name: string }).name
      assert.equal((await api.get(`${c.path}/${name}`)).status, 404, 'nothing was stored')
    })
  }
})
