/** Rule matching as upstream's rbac/v1 helpers decide it, one row per case. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Attributes } from '../../../../core/authz/authorizer.js'
import { policyRuleOf, ruleAllows } from '../../../../core/authz/rbac/policy-rule.js'

const user = { username: 'alice', groups: [] }

function resource(verb: string, apiGroup: string, res: string, extra: Partial<Attributes> = {}): Attributes {
  return { user, verb, isResourceRequest: true, path: '', namespace: 'ns', apiGroup, apiVersion: 'v1', resource: res, subresource: '', name: '', ...extra }
}

function url(verb: string, path: string): Attributes {
  return { user, verb, isResourceRequest: false, path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' }
}

const rows: [string, Record<string, unknown>, Attributes, boolean][] = [
  ['exact verb, group and resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource('get', '', 'pods'), true],
  ['another verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource('list', '', 'pods'), false],
  ['* verb', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, resource('deletecollection', '', 'pods'), true],
  ['another group', { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, resource('get', 'apps', 'deployments'), false],
  ['* group', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, resource('get', 'apps', 'deployments'), true],
  ['* resource', { verbs: ['get'], apiGroups: ['apps'], resources: ['*'] }, resource('get', 'apps', 'deployments'), true],
  ['* resource covers subresources', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, resource('get', '', 'pods', { subresource: 'log' }), true],
  ['a resource does not cover its subresources', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource('get', '', 'pods', { subresource: 'log' }), false],
  ['resource/subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, resource('get', '', 'pods', { subresource: 'log' }), true],
  ['resource/subresource does not cover the resource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, resource('get', '', 'pods'), false],
  ['*/subresource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/scale'] }, resource('update', 'apps', 'deployments', { subresource: 'scale' }), true],
  ['*/subresource of another subresource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/scale'] }, resource('update', 'apps', 'deployments', { subresource: 'status' }), false],
  ['*/subresource does not cover the resource', { verbs: ['get'], apiGroups: ['*'], resources: ['*/status'] }, resource('get', '', 'pods'), false],
  ['a named object', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, resource('get', '', 'configmaps', { name: 'a' }), true],
  ['another name', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, resource('get', '', 'configmaps', { name: 'b' }), false],
  ['resourceNames never match a request without a name (list)', { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, resource('list', '', 'configmaps'), false],
  ['resourceNames never match a create', { verbs: ['create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, resource('create', '', 'configmaps'), false],
  ['a resource rule never matches a URL', { verbs: ['get'], apiGroups: ['*'], resources: ['*'] }, url('get', '/version'), false],
  ['an exact URL', { verbs: ['get'], nonResourceURLs: ['/version'] }, url('get', '/version'), true],
  ['an exact URL is not a prefix', { verbs: ['get'], nonResourceURLs: ['/version'] }, url('get', '/version/x'), false],
  ['a URL with a trailing *', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, url('get', '/healthz/etcd'), true],
  ['a trailing * needs the prefix whole', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, url('get', '/healthz'), false],
  ['* URL', { verbs: ['get'], nonResourceURLs: ['*'] }, url('get', '/anything'), true],
  ['a URL rule with another verb', { verbs: ['get'], nonResourceURLs: ['*'] }, url('post', '/anything'), false],
  ['a URL rule never matches a resource', { verbs: ['*'], nonResourceURLs: ['*'] }, resource('get', '', 'pods'), false],
  ['a malformed rule matches nothing', { verbs: 'get', apiGroups: [''], resources: ['pods'] }, resource('get', '', 'pods'), false],
]

describe('RBAC rule matching', () => {
  for (const [what, rule, attrs, allows] of rows) {
    it(`${allows ? 'allows' : 'does not allow'}: ${what}`, () => {
      assert.equal(ruleAllows(attrs, policyRuleOf(rule)), allows)
    })
  }
})
