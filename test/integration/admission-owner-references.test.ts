/**
 * OwnerReferencesPermissionEnforcement as an attack: a user who may create
 * config maps but not delete them cannot hand them to the garbage collector
 * through an owner reference, and one who may delete them still cannot hold
 * back an owner's deletion (blockOwnerDeletion) without `update` on the
 * owner's finalizers. Each refusal is 403 and stores nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'
import { as, grant, tokens } from './rbac-fixtures.js'

const CM = '/api/v1/namespaces/team-a/configmaps'

async function cluster(): Promise<{ api: TestClient; ownerUid: string }> {
  const api = await startServer({
    authentication: { tokens },
    authorizationModes: ['RBAC'],
    bootstrapRbacPolicy: false,
    admission: { plugins: ['OwnerReferencesPermissionEnforcement'] },
  })
  await api.post('/api/v1/namespaces', { metadata: { name: 'team-a' } })
  const owner = await api.post(CM, { metadata: { name: 'owner' } })
  await grant(api, 'alice', 'alice-cm', [{ verbs: ['create', 'get'], apiGroups: [''], resources: ['configmaps'] }], 'team-a')
  await grant(api, 'bob', 'bob-cm', [{ verbs: ['create', 'get', 'delete'], apiGroups: [''], resources: ['configmaps'] }], 'team-a')
  return { api, ownerUid: owner.body.metadata.uid }
}

const owned = (name: string, uid: string, block?: boolean) => ({
  metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid, ...(block === undefined ? {} : { blockOwnerDeletion: block }) }] },
})

describe('OwnerReferencesPermissionEnforcement', () => {
  it("refuses an owner reference on an object the user can't delete, and stores nothing", async () => {
    const { api, ownerUid } = await cluster()
    const res = await api.post(CM, owned('child', ownerUid), as('alice'))
    assert.equal(res.status, 403)
    assert.equal(res.body.reason, 'Forbidden')
    assert.match(res.body.message, /^configmaps "child" is forbidden: cannot set an ownerRef on a resource you can't delete: .*, <nil>$/)
    assert.equal((await api.get(`${CM}/child`)).status, 404)
    assert.equal((await api.post(CM, { metadata: { name: 'plain' } }, as('alice'))).status, 201)
  })

  it("refuses blockOwnerDeletion without update on the owner's finalizers, and allows it with", async () => {
    const { api, ownerUid } = await cluster()
    assert.equal((await api.post(CM, owned('child', ownerUid), as('bob'))).status, 201)
    const res = await api.post(CM, owned('blocking', ownerUid, true), as('bob'))
    assert.equal(res.status, 403)
    assert.match(
      res.body.message,
      /^configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: .*, <nil>$/,
    )
    assert.equal((await api.get(`${CM}/blocking`)).status, 404)
    await grant(api, 'bob', 'bob-finalizers', [{ verbs: ['update'], apiGroups: [''], resources: ['configmaps/finalizers'] }], 'team-a')
    assert.equal((await api.post(CM, owned('blocking', ownerUid, true), as('bob'))).status, 201)
  })
})
