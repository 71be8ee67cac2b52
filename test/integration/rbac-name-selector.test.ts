/**
 * A list or watch with `fieldSelector=metadata.name=<x>` is authorized for
 * the name `<x>`, so that a rule limited by resourceNames may list its own
 * objects. The name is the one the selector selects (its value unescaped),
 * never the text as written: a ClusterRole's name may hold `\` and `,`,
 * which a selector writes escaped, and reading the escaped text as the name
 * authorized one name and listed another.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import type { TestClient } from './harness.js'
import { adminCreate, as, grant, RBAC, rbacServer, role } from './rbac-fixtures.js'

const CLUSTER_ROLES = `${RBAC}/clusterroles`
const listed = (selector: string) => `${CLUSTER_ROLES}?fieldSelector=${encodeURIComponent(selector)}`
const names = (body: any): string[] => (body.items ?? []).map((i: any) => i.metadata.name)

/** A 403 for a list of the role `name`: the name the request was authorized for is the one in its details. */
function assertListForbidden(r: { status: number; text: string; body: any }, name: string, verb: 'list' | 'watch' = 'list'): void {
  assert.equal(r.status, 403, r.text)
  assert.equal(r.body.reason, 'Forbidden')
  assert.deepEqual(r.body.details, { name, group: 'rbac.authorization.k8s.io', kind: 'clusterroles' })
  // The name as Go's %q prints it: `a\b` is shown "a\\b".
  assert.equal(
    r.body.message,
    `clusterroles.rbac.authorization.k8s.io ${JSON.stringify(name)} is forbidden: User "alice" cannot ${verb} resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
  )
  assert.doesNotMatch(r.text, /"kind":"ClusterRole"/)
}

describe('a list authorized for the name its field selector selects', () => {
  let api: TestClient
  before(async () => {
    api = await rbacServer()
    // `a\\b` and `a\` are alice's; `a\b` and `a,b` are not.
    for (const name of ['a\\\\b', 'a\\', 'a\\b', 'a,b']) await adminCreate(api, CLUSTER_ROLES, role(name, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]))
    await grant(api, 'alice', 'two-roles', [{ verbs: ['list'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['a\\\\b', 'a\\'] }])
  })

  it('lists a role the rule names, by its name escaped as a selector writes it', async () => {
    const own = await api.get(listed('metadata.name=a\\\\\\\\b'), as('alice'))
    assert.equal(own.status, 200, own.text)
    assert.deepEqual(names(own.body), ['a\\\\b'])
    const other = await api.get(listed('metadata.name=a\\\\'), as('alice'))
    assert.equal(other.status, 200, other.text)
    assert.deepEqual(names(other.body), ['a\\'])
  })

  it('refuses a selector whose escaped text spells a permitted name but selects another role', async () => {
    // `a\\b` as written is a permitted name; it selects the role `a\b`.
    assertListForbidden(await api.get(listed('metadata.name=a\\\\b'), as('alice')), 'a\\b')
    // Split at its comma, `a\,b` starts with the permitted `a\`; it selects the role `a,b`.
    assertListForbidden(await api.get(listed('metadata.name=a\\,b'), as('alice')), 'a,b')
    // A watch is authorized for the same name.
    assertListForbidden(await api.get(`${listed('metadata.name=a\\\\b')}&watch=1&timeoutSeconds=1`, as('alice')), 'a\\b', 'watch')
    assertListForbidden(await api.get(`${listed('metadata.name=a\\,b')}&watch=1&timeoutSeconds=1`, as('alice')), 'a,b', 'watch')
  })

  it('takes the name as upstream takes it from the selector: unspaced, the first of two terms in the order of their text', async () => {
    // A value with a space is the name with the space, as upstream reads it; no role has it.
    assert.equal((await api.get(listed('metadata.name= a\\\\\\\\b'), as('alice'))).status, 403)
    // Two terms on the name: the first in the order of their text is the name asked for.
    const both = await api.get(listed('metadata.name=a\\\\\\\\b,metadata.name=a\\\\'), as('alice'))
    assert.equal(both.status, 200, both.text)
    assert.deepEqual(names(both.body), [])
  })
})
