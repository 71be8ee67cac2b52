/** Roles, cluster roles and their bindings: upstream's rules and messages, and the rbac/v1 defaults. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import {
  applyBindingDefaults,
  validateClusterRoleBinding,
  validateClusterRoleInSteps,
  validateClusterRoleUpdateInSteps,
  validateRoleBinding,
  validateRoleInSteps,
  validateRoleRefUnchanged,
} from '../../../core/resources/rbac/rules.js'
import { errorText } from '../../../core/machinery/field.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

const validateRole = (role: KubeObject) => runAtOnce(validateRoleInSteps(role))
const validateClusterRole = (role: KubeObject) => runAtOnce(validateClusterRoleInSteps(role))
const validateClusterRoleUpdate = (role: KubeObject, old: KubeObject) => runAtOnce(validateClusterRoleUpdateInSteps(role, old))

const obj = (fields: Record<string, unknown>): KubeObject => ({ metadata: { name: 'x', namespace: 'ns' }, ...fields })
const texts = (errs: { field: string }[]) => errs.map((e) => errorText(e as never))

describe('role rules', () => {
  it('accepts resource rules and refuses rules without verbs, groups or resources', () => {
    assert.deepEqual(validateRole(obj({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] })), [])
    assert.deepEqual(texts(validateRole(obj({ rules: [{}] }))), [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[0].resources: Required value: resource rules must supply at least one resource',
    ])
  })

  it('accepts resource names with several resources, as upstream does', () => {
    const rule = { apiGroups: [''], resources: ['users', 'groups'], resourceNames: ['bob', 'readers'], verbs: ['impersonate'] }
    assert.deepEqual(validateRole(obj({ rules: [rule] })), [])
    assert.deepEqual(validateClusterRole(obj({ rules: [rule] })), [])
  })

  it('keeps non-resource URLs to cluster roles, and apart from resources', () => {
    const urls = { nonResourceURLs: ['/healthz'], verbs: ['get'] }
    assert.deepEqual(validateClusterRole(obj({ rules: [urls] })), [])
    assert.deepEqual(texts(validateRole(obj({ rules: [urls] }))), [
      'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
    ])
    assert.deepEqual(texts(validateClusterRole(obj({ rules: [{ ...urls, resources: ['pods'] }] }))), [
      'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs',
    ])
  })

  it('checks the label selectors of an aggregation rule', () => {
    assert.deepEqual(texts(validateClusterRole(obj({ aggregationRule: {} }))), [
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ])
    const selectors = [{ matchExpressions: [{ key: 'a', operator: 'In' }, { key: 'b', operator: 'Near' }] }]
    assert.deepEqual(texts(validateClusterRole(obj({ aggregationRule: { clusterRoleSelectors: selectors } }))), [
      "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'aggregationRule.clusterRoleSelectors[0].matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator',
      'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
    ])
  })

  it('relaxes the label values of a selector on update only where the stored one had bad values, and still reports the selector', () => {
    const bad = { aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['not ok'] }] }] } }
    const good = { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } }
    const valueError = texts(validateClusterRole(obj(bad)))[0] ?? ''
    assert.match(valueError, /^aggregationRule\.clusterRoleSelectors\[0\]\.matchExpressions\[0\]\.values\[0\]: Invalid value: "not ok"/)
    assert.deepEqual(texts(validateClusterRoleUpdate(obj(bad), obj(good))), [
      valueError,
      'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
    ])
    assert.deepEqual(texts(validateClusterRoleUpdate(obj(bad), obj(bad))), ['aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.'])
    assert.deepEqual(validateClusterRoleUpdate(obj(good), obj(bad)), [])
  })
})

describe('binding rules', () => {
  const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }

  it('fills the roleRef group and the group of user and group subjects, never a service account’s', () => {
    const b = obj({
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'u' }, { kind: 'Group', name: 'g' }, { kind: 'ServiceAccount', name: 'sa' }],
    })
    applyBindingDefaults(b)
    assert.deepEqual(b['roleRef'], ref)
    assert.deepEqual(b['subjects'], [
      { kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' },
      { kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.k8s.io' },
      { kind: 'ServiceAccount', name: 'sa' },
    ])
  })

  it('refuses a missing roleRef as upstream words it, once defaulted', () => {
    const b = obj({})
    applyBindingDefaults(b)
    assert.deepEqual(texts(validateRoleBinding(b)), [
      'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
    ])
  })

  it('lets a cluster role binding grant only a cluster role, and wants its service accounts’ namespaces', () => {
    const b = obj({ roleRef: ref, subjects: [{ kind: 'ServiceAccount', name: 'sa' }] })
    assert.deepEqual(validateRoleBinding(b), [])
    assert.deepEqual(texts(validateClusterRoleBinding(b)), [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'subjects[0].namespace: Required value',
    ])
  })

  it('checks each subject by its kind', () => {
    const b = obj({
      roleRef: { ...ref, apiGroup: 'example.com', name: 'a/b' },
      subjects: [
        { kind: 'ServiceAccount', name: 'Bad_Name', apiGroup: 'x' },
        { kind: 'User', name: '', apiGroup: 'rbac.authorization.k8s.io' },
        { kind: 'Group', name: 'g', apiGroup: '' },
        { kind: 'Robot', name: 'r' },
      ],
    })
    assert.deepEqual(texts(validateRoleBinding(b)), [
      'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
      "roleRef.name: Invalid value: \"a/b\": may not contain '/'",
      'subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'subjects[0].apiGroup: Unsupported value: "x": supported values: ""',
      'subjects[1].name: Required value',
      'subjects[1].name: Invalid value: "": user name cannot be empty',
      'subjects[2].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
      'subjects[3].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ])
  })

  it('refuses a changed roleRef, showing it as upstream prints the struct', () => {
    const old = obj({ roleRef: ref })
    assert.deepEqual(validateRoleRefUnchanged(obj({ roleRef: { ...ref } }), old), [])
    assert.deepEqual(texts(validateRoleRefUnchanged(obj({ roleRef: { ...ref, name: 'other' } }), old)), [
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: cannot change roleRef',
    ])
  })
})
