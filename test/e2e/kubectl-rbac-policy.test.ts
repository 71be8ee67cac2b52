/**
 * The default RBAC policy and ClusterRole aggregation as kubectl sees them
 * on the daemon: upstream's roles labelled as upstream labels them, the
 * post-start hook among the readiness checks, `kubectl auth reconcile`
 * finding upstream's own role already in place, and a role labelled for
 * aggregation joining `edit`.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BOOTSTRAP_CLUSTER_ROLES } from '../../core/resources/rbac/generated/bootstrap-policy.js'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

describe('kubectl and the default RBAC policy', () => {
  it('lists every cluster role of the policy under upstream’s bootstrapping label', async () => {
    const out = await ok('get', 'clusterroles', '-l', 'kubernetes.io/bootstrapping=rbac-defaults', '-o', 'name')
    const expected = BOOTSTRAP_CLUSTER_ROLES.map((r) => `clusterrole.rbac.authorization.k8s.io/${r.metadata.name}`).sort()
    assert.deepEqual(out.trim().split('\n').sort(), expected)
  })

  it('shows the rbac/bootstrap-roles hook as ready', async () => {
    assert.match(await ok('get', '--raw', '/readyz?verbose'), /^\[\+\]poststarthook\/rbac\/bootstrap-roles ok$/m)
  })

  it('reconciles upstream’s own role with nothing to change', async () => {
    const before = await ok('get', 'clusterrole', 'system:node-proxier', '-o', 'jsonpath={.metadata.resourceVersion}')
    const file = d.manifest(
      'node-proxier.yaml',
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata:',
        '  name: system:node-proxier',
        'rules:',
        '- apiGroups: [""]',
        '  resources: [endpoints, services]',
        '  verbs: [list, watch]',
      ].join('\n'),
    )
    assert.equal(await ok('auth', 'reconcile', '-f', file), 'clusterrole.rbac.authorization.k8s.io/system:node-proxier reconciled\n')
    assert.equal(await ok('get', 'clusterrole', 'system:node-proxier', '-o', 'jsonpath={.metadata.resourceVersion}'), before)
  })

  it('adds the rules of a role labelled aggregate-to-edit to edit', async () => {
    const file = d.manifest(
      'widgets-edit.yaml',
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata:',
        '  name: widgets-edit',
        '  labels:',
        '    rbac.authorization.k8s.io/aggregate-to-edit: "true"',
        'rules:',
        '- apiGroups: [example.com]',
        '  resources: [widgets]',
        '  verbs: [create, delete]',
      ].join('\n'),
    )
    assert.equal(await ok('apply', '-f', file), 'clusterrole.rbac.authorization.k8s.io/widgets-edit created\n')
    const deadline = Date.now() + 10_000
    let groups = ''
    while (!groups.split(' ').includes('["example.com"]') && Date.now() < deadline) {
      groups = await ok('get', 'clusterrole', 'edit', '-o', 'jsonpath={.rules[*].apiGroups}')
      if (!groups.includes('example.com')) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.ok(groups.split(' ').includes('["example.com"]'), `edit's rules name example.com: ${groups}`)
  })
})
