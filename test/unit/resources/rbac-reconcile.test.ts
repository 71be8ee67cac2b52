/**
 * Upstream's reconciliation of stored RBAC objects with the default policy
 * (union mode), the rule comparison it rests on, and how an aggregated
 * ClusterRole gathers its rules; without a server.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { aggregatedRules } from '../../../core/controllers/clusterrole-aggregation.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import type { PolicyRule } from '../../../core/resources/rbac/bootstrap-policy-types.js'
import { covers, uncoveredRules } from '../../../core/resources/rbac/policy-comparator.js'
import { reconcileBinding, reconcileRole } from '../../../core/resources/rbac/reconcile.js'

const RBAC = 'rbac.authorization.k8s.io'

function clusterRole(name: string, rules: PolicyRule[], extra: Partial<KubeObject> = {}, labels?: Record<string, string>): KubeObject {
  return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name, ...(labels ? { labels } : {}) }, rules, ...extra }
}

const defaults = { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } }

describe('rule coverage (upstream policy comparator)', () => {
  it('lets wildcards, subresource wildcards and URL prefixes cover what they name', () => {
    assert.ok(covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }]))
    assert.ok(covers([{ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }], [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }]))
    assert.ok(covers([{ verbs: ['get'], nonResourceURLs: ['/apis/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/apis/apps/v1'] }]))
    assert.ok(!covers([{ verbs: ['get'], nonResourceURLs: ['/apis'] }], [{ verbs: ['get'], nonResourceURLs: ['/apis/apps'] }]))
    // A rule limited to names does not grant the whole resource; an unlimited one grants any name.
    assert.ok(!covers([{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]))
    assert.ok(covers([{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }]))
  })

  it('reports what is missing broken down to one group, resource and verb each, in upstream order', () => {
    const missing = uncoveredRules(
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'services'] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    )
    assert.deepEqual(missing, [
      { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], apiGroups: [''], resources: ['services'] },
      { verbs: ['list'], apiGroups: [''], resources: ['services'] },
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
    ])
  })
})

describe('reconciling a role with the policy', () => {
  const expected = clusterRole('system:thing', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], {}, defaults.labels)
  expected.metadata.annotations = defaults.annotations

  it('creates a missing role as the policy has it', () => {
    const result = reconcileRole(undefined, expected)
    assert.equal(result.operation, 'create')
    assert.deepEqual(result.object, expected)
  })

  it('adds missing rules, labels and annotations and keeps the extra ones', () => {
    const extra = { verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }
    const stored = clusterRole('system:thing', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, extra], {}, { team: 'a' })
    const result = reconcileRole(stored, expected)
    assert.equal(result.operation, 'update')
    assert.equal(result.protected, false)
    assert.deepEqual(result.object['rules'], [
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      extra,
      { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
    ])
    assert.deepEqual(result.object.metadata.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults', team: 'a' })
    assert.deepEqual(result.object.metadata.annotations, defaults.annotations)
  })

  it('keeps a stored label or annotation value over the policy’s', () => {
    const stored = structuredClone(expected)
    stored.metadata.labels = { 'kubernetes.io/bootstrapping': 'mine' }
    const result = reconcileRole(stored, expected)
    assert.equal(result.operation, 'none')
    assert.equal(result.object.metadata.labels?.['kubernetes.io/bootstrapping'], 'mine')
  })

  it('marks a role annotated autoupdate "false" as protected', () => {
    const stored = clusterRole('system:thing', [], {}, defaults.labels)
    stored.metadata.annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'false' }
    const result = reconcileRole(stored, expected)
    assert.equal(result.protected, true)
    assert.equal(result.operation, 'update')
  })

  it('adds missing aggregation selectors and never rules an aggregated role lacks', () => {
    const aggregation = { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }] } }
    const want = clusterRole('admin', [], aggregation)
    const stored = clusterRole('admin', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }] },
    })
    const result = reconcileRole(stored, want)
    assert.equal(result.operation, 'update')
    assert.deepEqual(result.object['aggregationRule'], { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }, { matchLabels: { a: 'true' } }] })
    assert.deepEqual(result.object['rules'], stored['rules'])
    assert.equal(reconcileRole(result.object, want).operation, 'none')
  })
})

describe('reconciling a binding with the policy', () => {
  const binding = (subjects: unknown[], roleName = 'system:thing'): KubeObject => ({
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'system:thing', ...defaults },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: roleName },
    subjects,
  })
  const user = { apiGroup: RBAC, kind: 'User', name: 'system:thing' }
  const sa = { kind: 'ServiceAccount', name: 'thing', namespace: 'kube-system' }

  it('adds missing subjects after the stored ones', () => {
    const other = { apiGroup: RBAC, kind: 'Group', name: 'ops' }
    const result = reconcileBinding(binding([other, sa]), binding([user, sa]))
    assert.equal(result.operation, 'update')
    assert.deepEqual(result.object['subjects'], [other, sa, user])
    assert.deepEqual(result.added, [user])
  })

  it('finds nothing to do when every subject is there', () => {
    assert.equal(reconcileBinding(binding([sa, user]), binding([user, sa])).operation, 'none')
  })

  it('replaces a binding that grants another role', () => {
    const result = reconcileBinding(binding([user], 'view'), binding([user]))
    assert.equal(result.operation, 'recreate')
    assert.deepEqual(result.object['roleRef'], { apiGroup: RBAC, kind: 'ClusterRole', name: 'system:thing' })
  })
})

describe('the rules of an aggregated cluster role', () => {
  const get = { verbs: ['get'], apiGroups: [''], resources: ['pods'] }
  const list = { verbs: ['list'], apiGroups: [''], resources: ['pods'] }
  const watch = { verbs: ['watch'], apiGroups: [''], resources: ['pods'] }

  it('gathers per selector the matching roles by name, each rule once, leaving itself out', () => {
    const aggregate = clusterRole('agg', [watch], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { second: 'true' } }, { matchLabels: { first: 'true' } }] },
    }, { first: 'true' })
    const roles = [
      aggregate,
      clusterRole('b', [list, get], {}, { first: 'true' }),
      clusterRole('a', [get], {}, { first: 'true' }),
      clusterRole('c', [watch], {}, { second: 'true' }),
      clusterRole('d', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
    ]
    assert.deepEqual(aggregatedRules(aggregate, roles), [watch, get, list])
  })

  it('gathers nothing when no role matches', () => {
    const aggregate = clusterRole('agg', [get], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { none: 'true' } }] } })
    assert.deepEqual(aggregatedRules(aggregate, [aggregate]), [])
  })
})
