/**
 * ClusterRole aggregation in-process (upstream's clusterrole-aggregation
 * controller): `admin`, `edit` and `view` fill themselves from the
 * `system:aggregate-to-*` roles, and a role carrying an aggregation label
 * joins them when created, changes them when changed and leaves them when
 * deleted; an aggregated role's own selectors decide what it gathers.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import { createApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import type { PolicyRule } from '../../core/resources/rbac/bootstrap-policy-types.js'
import { BOOTSTRAP_CLUSTER_ROLES } from '../../core/resources/rbac/generated/bootstrap-policy.js'
import { eventually, TestClient } from './harness.js'

const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles'

async function start(options: ApiServerOptions = {}, storage?: MemoryStorage): Promise<TestClient> {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, garbageCollector: false, bootstrapRbacPolicy: true, ...options }, storage && { storage })
  await server.ready
  return new TestClient(server)
}

async function rulesOf(api: TestClient, name: string): Promise<PolicyRule[]> {
  const res = await api.get(`${ROLES}/${name}`)
  assert.equal(res.status, 200, res.text)
  return res.body.rules ?? []
}

/** Each rule once, in the order first met: how upstream's controller gathers them. */
function union(...lists: PolicyRule[][]): PolicyRule[] {
  const seen = new Set<string>()
  // A rule's text with its fields in name order: one key per rule, so thousands of rules take no pairwise comparisons.
  const keyOf = (rule: PolicyRule): string => JSON.stringify(Object.entries(rule).sort(([a], [b]) => (a < b ? -1 : 1)))
  const out: PolicyRule[] = []
  for (const rule of lists.flat()) {
    const key = keyOf(rule)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(rule)
  }
  return out
}

const policyRules = (name: string): PolicyRule[] => BOOTSTRAP_CLUSTER_ROLES.find((r) => r.metadata.name === name)!.rules

/** Waits until the role holds exactly `want`, in that order (field order within a rule aside). */
async function rulesBecome(api: TestClient, name: string, want: PolicyRule[]): Promise<void> {
  await eventually(`${name} holds ${JSON.stringify(want)}`, async () => isDeepStrictEqual(await rulesOf(api, name), want))
}

const widgets = { verbs: ['get', 'list', 'watch'], apiGroups: ['example.com'], resources: ['widgets'] }
const gadgets = { verbs: ['create'], apiGroups: ['example.com'], resources: ['gadgets'] }

describe('cluster role aggregation', () => {
  it('fills view, edit and admin from the roles labelled for them, as upstream holds them', async () => {
    const api = await start()
    // view gathers aggregate-to-view; edit gathers aggregate-to-edit and view (labelled for edit); admin gathers edit and aggregate-to-admin.
    const view = policyRules('system:aggregate-to-view')
    const edit = union(policyRules('system:aggregate-to-edit'), view)
    const admin = union(edit, policyRules('system:aggregate-to-admin'))
    await rulesBecome(api, 'view', view)
    await rulesBecome(api, 'edit', edit)
    await rulesBecome(api, 'admin', admin)
    const managers = (await api.get(`${ROLES}/admin`)).body.metadata.managedFields.map((m: { manager: string; operation: string }) => [m.manager, m.operation])
    assert.deepEqual(managers.find(([manager]: string[]) => manager === 'clusterrole-aggregation-controller'), ['clusterrole-aggregation-controller', 'Apply'])
    await api.server.shutdown()
  })

  it('has them filled when ready resolves, and a reset() or a further server begins with them as filled', async () => {
    const view = policyRules('system:aggregate-to-view')
    const edit = union(policyRules('system:aggregate-to-edit'), view)
    const admin = union(edit, policyRules('system:aggregate-to-admin'))
    const extra = { verbs: ['get'], apiGroups: ['example.com'], resources: ['sprockets'] }
    // The second server begins from the first one's start-up (reuseStartup, on by default).
    for (const server of ['first', 'further']) {
      const api = await start({ record: true })
      assert.deepEqual(await rulesOf(api, 'admin'), admin, `${server}: admin at ready`)
      const atReady = (await api.get(`${ROLES}/admin`)).body.metadata.resourceVersion
      await api.server.reset()
      assert.equal((await api.get(`${ROLES}/admin`)).body.metadata.resourceVersion, atReady, `${server}: reset() returns to admin as filled`)
      // Since the reset, the controller writes only what a new labelled role changes: each aggregated role once.
      const labelled = { metadata: { name: 'sprocket-reader', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [extra] }
      assert.equal((await api.post(ROLES, labelled)).status, 201)
      await eventually('admin gathers the new role', async () => (await rulesOf(api, 'admin')).some((rule) => isDeepStrictEqual(rule, extra)))
      const written = api.server.activity
        .events()
        .filter((e) => e.resource === 'clusterroles')
        .map((e) => `${e.type} ${e.name}`)
      assert.deepEqual(written, ['ADDED sprocket-reader', 'MODIFIED view', 'MODIFIED edit', 'MODIFIED admin'], server)
      await api.server.shutdown()
    }
  })

  it('writes each aggregated role once on a first start, after the bootstrap policy is whole', async () => {
    // Upstream's controller starts with kube-controller-manager, once the server is healthy: its first pass sees every labelled role.
    const storage = new MemoryStorage()
    const api = await start({}, storage)
    const view = policyRules('system:aggregate-to-view')
    const edit = union(policyRules('system:aggregate-to-edit'), view)
    await rulesBecome(api, 'admin', union(edit, policyRules('system:aggregate-to-admin')))
    await rulesBecome(api, 'edit', edit)
    await rulesBecome(api, 'view', view)
    // Every change to a cluster role since the store began, from the store's own history, up to a role created last.
    assert.equal((await api.post(ROLES, { metadata: { name: 'last' } })).status, 201)
    const changes: string[] = []
    const watch = storage.watch('/registry/clusterroles/', { resourceVersion: '1' })
    for await (const event of watch) {
      if (event.object.metadata.name === 'last') break
      if (event.type !== 'BOOKMARK') changes.push(`${event.type} ${event.object.metadata.name ?? ''}`)
    }
    watch.stop()
    assert.ok(changes.length > 60, `the policy's cluster roles were written: ${changes.length} changes`)
    const lastAdded = changes.reduce((last, c, i) => (c.startsWith('ADDED ') ? i : last), -1)
    const aggregated = changes.map((c, i) => [c, i] as const).filter(([c]) => /^MODIFIED (admin|edit|view)$/.test(c))
    assert.ok(aggregated.length > 0)
    // No aggregated role written until every role of the policy was there.
    assert.deepEqual(
      aggregated.filter(([, i]) => i < lastAdded).map(([c]) => c),
      [],
    )
    // admin gathers edit, which gathers view: taken sources first, each is written once its sources are filled.
    assert.deepEqual(
      aggregated.map(([c]) => c),
      ['MODIFIED view', 'MODIFIED edit', 'MODIFIED admin'],
    )
    await api.server.shutdown()
  })

  it('adds a new labelled role’s rules to view, edit and admin, follows its changes and removes them when it is deleted', async () => {
    const api = await start()
    const view = policyRules('system:aggregate-to-view')
    await rulesBecome(api, 'view', view)
    const created = await api.post(ROLES, {
      metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [widgets],
    })
    assert.equal(created.status, 201, created.text)
    // Roles are read in name order: the new one comes after system:aggregate-to-view.
    await rulesBecome(api, 'view', union(view, [widgets]))
    await eventually('edit and admin hold the new rule', async () => {
      const [edit, admin] = [await rulesOf(api, 'edit'), await rulesOf(api, 'admin')]
      return [edit, admin].every((rules) => rules.some((r) => isDeepStrictEqual(r, widgets)))
    })

    const changed = await api.put(`${ROLES}/widgets-view`, { ...created.body, rules: [widgets, gadgets] })
    assert.equal(changed.status, 200, changed.text)
    await rulesBecome(api, 'view', union(view, [widgets, gadgets]))

    assert.equal((await api.delete(`${ROLES}/widgets-view`)).status, 200)
    await rulesBecome(api, 'view', view)
    await eventually('edit and admin no longer hold the removed rules', async () => {
      const rules = [...(await rulesOf(api, 'edit')), ...(await rulesOf(api, 'admin'))]
      return !rules.some((r) => r.apiGroups?.includes('example.com'))
    })
    await api.server.shutdown()
  })

  it('gathers 3,000 distinct rules of a labelled role, and each once when two roles hold the same ones', async () => {
    const api = await start()
    const view = policyRules('system:aggregate-to-view')
    await rulesBecome(api, 'view', view)
    const many: PolicyRule[] = Array.from({ length: 3000 }, (_, i) => ({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: [`cm-${i}`] }))
    for (const name of ['many-a', 'many-b']) {
      const created = await api.post(ROLES, { metadata: { name, labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: many })
      assert.equal(created.status, 201, created.text)
    }
    // Roles are read in name order: many-a and many-b come before system:aggregate-to-view.
    await rulesBecome(api, 'view', union(many, view))
    await api.server.shutdown()
  })

  it('gathers what a role’s own selectors pick, follows a changed selector, and empties when nothing matches', async () => {
    const api = await start()
    for (const [name, team, rule] of [
      ['team-a-widgets', 'a', widgets],
      ['team-b-gadgets', 'b', gadgets],
    ] as const) {
      const res = await api.post(ROLES, { metadata: { name, labels: { 'example.com/team': team } }, rules: [rule] })
      assert.equal(res.status, 201, res.text)
    }
    const created = await api.post(ROLES, {
      metadata: { name: 'team-a' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/team': 'a' } }] },
    })
    assert.equal(created.status, 201, created.text)
    await rulesBecome(api, 'team-a', [widgets])

    const current = (await api.get(`${ROLES}/team-a`)).body
    const reselected = await api.put(`${ROLES}/team-a`, {
      ...current,
      aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'example.com/team', operator: 'In', values: ['b'] }] }] },
    })
    assert.equal(reselected.status, 200, reselected.text)
    await rulesBecome(api, 'team-a', [gadgets])

    // The picked role loses its label: nothing matches any more.
    const picked = (await api.get(`${ROLES}/team-b-gadgets`)).body
    assert.equal((await api.put(`${ROLES}/team-b-gadgets`, { ...picked, metadata: { ...picked.metadata, labels: {} } })).status, 200)
    await rulesBecome(api, 'team-a', [])
    await api.server.shutdown()
  })

  it('leaves aggregated roles empty with clusterRoleAggregation: false', async () => {
    const api = await start({ clusterRoleAggregation: false })
    assert.deepEqual(await rulesOf(api, 'admin'), [])
    // The policy itself is still there, only unaggregated.
    assert.ok((await rulesOf(api, 'system:aggregate-to-admin')).length > 0)
    await api.server.shutdown()
  })
})
