import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { abacAuthorizer } from '../../../core/authz/abac.js'
import type { Attributes } from '../../../core/authz/authorizer.js'
import { loadAbacPolicy } from '../../../core/config/abac-policy.js'

const rule = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })

const POLICY = loadAbacPolicy(
  [
    rule({ user: 'admin', namespace: '*', resource: '*', apiGroup: '*', nonResourcePath: '*' }),
    rule({ user: 'alice', namespace: 'projectCaribou', resource: 'pods', apiGroup: '' }),
    rule({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
    rule({ group: 'ops', namespace: '*', resource: 'deployments', apiGroup: 'apps' }),
    rule({ user: '*', nonResourcePath: '/version', readonly: true }),
    rule({ user: 'carol', nonResourcePath: '/logs/*' }),
    // The unversioned form: a user with no resource or namespace may do anything.
    JSON.stringify({ user: 'legacy' }),
  ].join('\n'),
  'policy.jsonl',
)

function resource(user: string, groups: string[], verb: string, namespace: string, apiGroup: string, res: string): Attributes {
  return { user: { username: user, groups }, verb, isResourceRequest: true, path: '', namespace, apiGroup, apiVersion: 'v1', resource: res, subresource: '', name: '' }
}
function path(user: string, groups: string[], verb: string, p: string): Attributes {
  return { user: { username: user, groups }, verb, isResourceRequest: false, path: p, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' }
}

describe('ABAC authorizer', () => {
  const authorizer = abacAuthorizer(POLICY)
  const cases: [string, Attributes, 'allow' | 'no-opinion'][] = [
    ['the admin anywhere', resource('admin', [], 'delete', 'kube-system', 'rbac.authorization.k8s.io', 'roles'), 'allow'],
    ['the admin on any path', path('admin', [], 'get', '/metrics'), 'allow'],
    ['alice writing pods in her namespace', resource('alice', [], 'create', 'projectCaribou', '', 'pods'), 'allow'],
    ['alice in another namespace', resource('alice', [], 'get', 'default', '', 'pods'), 'no-opinion'],
    ['alice on another resource', resource('alice', [], 'get', 'projectCaribou', '', 'secrets'), 'no-opinion'],
    ['alice in another API group', resource('alice', [], 'get', 'projectCaribou', 'apps', 'pods'), 'no-opinion'],
    ['readonly bob reading', resource('bob', [], 'watch', 'projectCaribou', '', 'pods'), 'allow'],
    ['readonly bob writing', resource('bob', [], 'delete', 'projectCaribou', '', 'pods'), 'no-opinion'],
    ['a member of ops in any namespace', resource('dave', ['ops'], 'update', 'team-a', 'apps', 'deployments'), 'allow'],
    ['someone outside ops', resource('dave', ['dev'], 'update', 'team-a', 'apps', 'deployments'), 'no-opinion'],
    ['every authenticated user reading /version', path('eve', ['system:authenticated'], 'get', '/version'), 'allow'],
    ['an unauthenticated user reading /version', path('system:anonymous', ['system:unauthenticated'], 'get', '/version'), 'no-opinion'],
    ['writing /version', path('eve', ['system:authenticated'], 'post', '/version'), 'no-opinion'],
    ['a path under a trailing *', path('carol', [], 'get', '/logs/kube.log'), 'allow'],
    ['a path beside a trailing *', path('carol', [], 'get', '/logsx'), 'no-opinion'],
    ['a resource rule never matches a path', path('alice', [], 'get', '/api/v1/namespaces/projectCaribou/pods'), 'no-opinion'],
    ['an unversioned rule with no resource: everything', resource('legacy', [], 'delete', 'x', 'apps', 'deployments'), 'allow'],
  ]
  for (const [what, attrs, expected] of cases) {
    it(`${expected === 'allow' ? 'allows' : 'has no opinion on'} ${what}`, async () => {
      const d = await authorizer.authorize(attrs)
      assert.equal(d.decision, expected)
      if (expected === 'no-opinion') assert.equal(d.reason, 'No policy matched.')
    })
  }

  it('never denies, so that a later mode may still allow', async () => {
    const d = await abacAuthorizer([]).authorize(resource('x', [], 'get', 'a', '', 'pods'))
    assert.equal(d.decision, 'no-opinion')
  })
})
