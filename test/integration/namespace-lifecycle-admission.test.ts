/**
 * NamespaceLifecycle as the first admission plugin: nothing is created in a
 * missing or terminating namespace, and the system namespaces are never
 * deleted; each refusal leaves the store as it was.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer } from './harness.js'

describe('NamespaceLifecycle', () => {
  for (const name of ['default', 'kube-system', 'kube-public']) {
    it(`refuses to delete ${name} with 403 and keeps it Active`, async () => {
      const api = await startServer()
      const before = await api.get(`/api/v1/namespaces/${name}`)
      const res = await api.delete(`/api/v1/namespaces/${name}`)
      assert.equal(res.status, 403)
      assert.equal(res.body.reason, 'Forbidden')
      assert.equal(res.body.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`)
      assert.deepEqual((await api.get(`/api/v1/namespaces/${name}`)).body, before.body)
    })
  }

  it('refuses a create in a missing namespace with 404 and stores nothing', async () => {
    const api = await startServer()
    const res = await api.post('/api/v1/namespaces/missing/configmaps', { metadata: { name: 'x' } })
    assert.equal(res.status, 404)
    assert.equal(res.body.message, 'namespaces "missing" not found')
    assert.equal((await api.get('/api/v1/namespaces/missing/configmaps/x')).status, 404)
    assert.deepEqual((await api.get('/api/v1/configmaps')).body.items.filter((c: { metadata: { name: string } }) => c.metadata.name === 'x'), [])
  })

  it('lets other namespaces be deleted', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    assert.equal((await api.delete('/api/v1/namespaces/team')).status, 200)
  })
})
