/**
 * A PUT of an object that is not stored, as upstream's generic store answers
 * it: the kinds whose strategy allows create on update (RBAC's four, events,
 * endpoints, limit ranges, services, leases, runtime classes) create it with
 * a 201, admitted as a CREATE and authorized as a `create` too; every other
 * kind answers 404 and stores nothing.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'
import { as, grant, RBAC, rbacServer, untilAllowed } from './rbac-fixtures.js'

const ROLES = `${RBAC}/namespaces/default/roles`
const CM = '/api/v1/namespaces/default/configmaps'
const MERGE = 'application/merge-patch+json'
const role = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, ...extra },
  rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
})

describe('a PUT of an object that is not stored', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('creates a Role (201) and stores it, ignoring a resourceVersion in the body as upstream\'s storage does', async () => {
    const res = await api.put(`${ROLES}/made-by-put`, role('made-by-put'))
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.kind, 'Role')
    assert.ok(res.body.metadata.uid)
    assert.ok(res.body.metadata.creationTimestamp)
    const stored = await api.get(`${ROLES}/made-by-put`)
    assert.equal(stored.status, 200)
    assert.deepEqual(stored.body.rules, role('x').rules)
    assert.equal(stored.body.metadata.uid, res.body.metadata.uid)
    // A PUT of what is now stored is an update again.
    assert.equal((await api.put(`${ROLES}/made-by-put`, stored.body)).status, 200)

    const withVersion = await api.put(`${ROLES}/with-version`, role('with-version', { resourceVersion: '12345' }))
    assert.equal(withVersion.status, 201, withVersion.text)
    assert.notEqual(withVersion.body.metadata.resourceVersion, '12345')
  })

  it('updates what another writer created meanwhile, as upstream\'s update starts over on it', async () => {
    const replies = await Promise.all([1, 2].map(() => api.put(`${ROLES}/raced`, role('raced'))))
    assert.deepEqual(replies.map((r) => r.status).sort(), [200, 201], replies.map((r) => r.text).join('\n'))
  })

  it('refuses a body whose uid names an object, as no missing object has it (409), and one naming another object (400)', async () => {
    const uid = '6b1b9c6e-0000-4000-8000-000000000001'
    const res = await api.put(`${ROLES}/with-uid`, role('with-uid', { uid }))
    assert.equal(res.status, 409, res.text)
    assert.equal(
      res.body.message,
      `Operation cannot be fulfilled on roles.rbac.authorization.k8s.io "with-uid": StorageError: invalid object, Code: 4, Key: /registry/roles/default/with-uid, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: `,
    )
    const renamed = await api.put(`${ROLES}/one-name`, role('other-name'))
    assert.equal(renamed.status, 400, renamed.text)
    assert.equal(renamed.body.message, 'the name of the object (other-name) does not match the name on the URL (one-name)')
    for (const name of ['with-uid', 'one-name', 'other-name']) assert.equal((await api.get(`${ROLES}/${name}`)).status, 404)
  })

  it('creates a Service with what a create allocates (its cluster IP)', async () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'put-svc' }, spec: { ports: [{ port: 80 }] } }
    const res = await api.put('/api/v1/namespaces/default/services/put-svc', svc)
    assert.equal(res.status, 201, res.text)
    assert.match(res.body.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/)
    assert.equal((await api.get('/api/v1/namespaces/default/services/put-svc')).body.spec.clusterIP, res.body.spec.clusterIP)
  })

  it('answers 404 for a ConfigMap, whose upstream strategy does not create on update, and stores nothing', async () => {
    const res = await api.put(`${CM}/absent`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'absent' }, data: { a: 'b' } })
    assert.equal(res.status, 404, res.text)
    assert.deepEqual(
      { reason: res.body.reason, message: res.body.message, details: res.body.details },
      { reason: 'NotFound', message: 'configmaps "absent" not found', details: { name: 'absent', kind: 'configmaps' } },
    )
    assert.equal((await api.get(`${CM}/absent`)).status, 404)
  })

  it('refuses a body naming another object or of another kind with 400 before it looks the object up, as upstream\'s update handler', async () => {
    const named = await api.put(`${CM}/absent`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' }, data: { a: 'b' } })
    assert.equal(named.status, 400, named.text)
    assert.equal(named.body.message, 'the name of the object (other) does not match the name on the URL (absent)')
    const kind = await api.put(`${CM}/absent`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'absent' } })
    assert.equal(kind.status, 400, kind.text)
    assert.equal(kind.body.message, 'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion')
    assert.equal((await api.get(`${CM}/other`)).status, 404)
  })

  it('answers 404 for a merge patch of a missing Role: only a PUT or an apply creates', async () => {
    const res = await api.patch(`${ROLES}/patched`, { rules: [] }, MERGE)
    assert.equal(res.status, 404, res.text)
    assert.equal(res.body.message, 'roles.rbac.authorization.k8s.io "patched" not found')
    assert.equal((await api.get(`${ROLES}/patched`)).status, 404)
  })

  it('with dryRun=All answers the object it would create and stores nothing', async () => {
    const res = await api.put(`${ROLES}/dry?dryRun=All`, role('dry'))
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.metadata.name, 'dry')
    assert.ok(res.body.metadata.uid)
    assert.equal((await api.get(`${ROLES}/dry`)).status, 404)
  })
})

describe('a PUT that creates, under RBAC', () => {
  const TEAM_ROLES = `${RBAC}/namespaces/team-a/roles`
  const GROUP = 'rbac.authorization.k8s.io'
  // Rules alice holds herself, so that the escalation check lets her write them.
  const held = (name: string) => ({ metadata: { name }, rules: [{ verbs: ['get', 'update'], apiGroups: [GROUP], resources: ['roles'] }] })
  let api: TestClient
  before(async () => {
    api = await rbacServer()
  })

  it('is refused (403) to a caller who may update but not create, dry run or not, and stores nothing', async () => {
    await grant(api, 'alice', 'role-updater', [{ verbs: ['get', 'update'], apiGroups: [GROUP], resources: ['roles'] }], 'team-a')
    for (const query of ['', '?dryRun=All']) {
      const res = await api.put(`${TEAM_ROLES}/planted${query}`, held('planted'), as('alice'))
      assert.equal(res.status, 403, res.text)
      assert.deepEqual(
        { reason: res.body.reason, message: res.body.message, details: res.body.details },
        { reason: 'Forbidden', message: 'roles.rbac.authorization.k8s.io "planted" is forbidden: ', details: { name: 'planted', group: GROUP, kind: 'roles' } },
      )
    }
    assert.equal((await api.get(`${TEAM_ROLES}/planted`)).status, 404)
    // The update she may do is done with update alone.
    assert.equal((await api.post(TEAM_ROLES, held('present'))).status, 201)
    const present = await api.get(`${TEAM_ROLES}/present`)
    assert.equal((await api.put(`${TEAM_ROLES}/present`, { ...present.body, metadata: { ...present.body.metadata, labels: { a: 'b' } } }, as('alice'))).status, 200)
    // Granted create too, her PUT creates.
    await grant(api, 'alice', 'role-creator', [{ verbs: ['create'], apiGroups: [GROUP], resources: ['roles'] }], 'team-a')
    await untilAllowed(api, 'alice', { verb: 'create', group: GROUP, resource: 'roles', namespace: 'team-a' })
    const created = await api.put(`${TEAM_ROLES}/planted`, held('planted'), as('alice'))
    assert.equal(created.status, 201, created.text)
  })
})

describe('a PUT that creates, under admission', () => {
  const ADM = '/apis/admissionregistration.k8s.io/v1'

  it('is admitted as a CREATE: a policy on CREATE alone refuses it (422) and nothing is stored', async () => {
    const api = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    assert.equal((await api.post(ROLES, role('kept'))).status, 201)
    const rules = [{ apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['roles'] }]
    const policy = { metadata: { name: 'ok-prefix' }, spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: "object.metadata.name.startsWith('ok-')" }] } }
    assert.equal((await api.post(`${ADM}/validatingadmissionpolicies`, policy)).status, 201)
    const binding = { metadata: { name: 'ok-prefix-binding' }, spec: { policyName: 'ok-prefix', validationActions: ['Deny'] } }
    assert.equal((await api.post(`${ADM}/validatingadmissionpolicybindings`, binding)).status, 201)
    await eventually('the policy is in force', async () => (await api.post(`${ROLES}?dryRun=All`, role('probe'))).status === 422, 60_000)

    const res = await api.put(`${ROLES}/refused`, role('refused'))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.reason, 'Invalid')
    assert.equal(
      res.body.message,
      `roles.rbac.authorization.k8s.io "refused" is forbidden: ValidatingAdmissionPolicy 'ok-prefix' with binding 'ok-prefix-binding' denied request: failed expression: object.metadata.name.startsWith('ok-')`,
    )
    assert.equal((await api.get(`${ROLES}/refused`)).status, 404)
    assert.equal((await api.put(`${ROLES}/ok-made`, role('ok-made'))).status, 201)
    // An update of a stored Role is an UPDATE, which the policy does not match.
    const kept = await api.get(`${ROLES}/kept`)
    assert.equal((await api.put(`${ROLES}/kept`, { ...kept.body, rules: [] })).status, 200)
  })
})
