/** Whether one set of rules covers another, and how the missing ones are printed, as upstream's escalation check. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { breakdownRule, compactString, describeMissingRules, uncoveredRules } from '../../../../core/authz/rbac/covers.js'
import { policyRuleOf } from '../../../../core/authz/rbac/policy-rule.js'

const rules = (...raw: Record<string, unknown>[]) => raw.map(policyRuleOf)

const rows: [string, Record<string, unknown>[], Record<string, unknown>[], boolean][] = [
  ['the same rule', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], true],
  ['fewer verbs', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }], true],
  ['a verb more', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }], false],
  ['pieces from two owner rules', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verbs: ['list'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], true],
  ['* covers any verb', [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['escalate'], apiGroups: [''], resources: ['pods'] }], true],
  ['a verb does not cover *', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }], false],
  ['* group', [{ verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }], [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }], true],
  ['* resource covers a subresource', [{ verbs: ['get'], apiGroups: [''], resources: ['*'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }], true],
  ['*/subresource covers resource/subresource', [{ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }], true],
  ['a resource does not cover its subresource', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }], false],
  ['an owner without names covers named pieces', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }], true],
  ['an owner with names covers those names', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'b'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['b'] }], true],
  ['an owner with names does not cover other names', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['c'] }], false],
  ['an owner with names does not cover every object', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }], false],
  ['a URL prefix', [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/logs/kube'] }], true],
  ['a URL outside the prefix', [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }], false],
  ['a resource rule does not cover a URL', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }], false],
  ['nothing to cover', [], [], true],
]

describe('covering rules', () => {
  for (const [what, owner, wanted, covered] of rows) {
    it(`${covered ? 'covers' : 'does not cover'}: ${what}`, () => {
      assert.equal(uncoveredRules(rules(...owner), rules(...wanted)).length === 0, covered)
    })
  }

  it('breaks a rule down to one verb, group, resource and name per piece', () => {
    const pieces = breakdownRule(policyRuleOf({ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['x'], resourceNames: ['a', 'b'] }))
    assert.equal(pieces.length, 8)
    assert.deepEqual(pieces.map(compactString).slice(0, 2), [
      '{APIGroups:[""], Resources:["x"], ResourceNames:["a"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["x"], ResourceNames:["b"], Verbs:["get"]}',
    ])
  })

  it('lists what is missing compacted by group and resource, sorted, as upstream prints it', () => {
    const missing = uncoveredRules(rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), rules(
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'secrets'] },
      { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      { verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['web'] },
    ))
    assert.deepEqual(describeMissingRules(missing), [
      '{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch"]}',
      '{APIGroups:["apps"], Resources:["deployments/scale"], ResourceNames:["web"], Verbs:["update"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ])
  })
})
