/**
 * NamespaceLifecycle as the first admission plugin: nothing is created in a
 * missing or terminating namespace, and the system namespaces are never
 * deleted; each refusal leaves the store as it was.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

/** A namespace held in Terminating by objects with a finalizer nobody removes: a ServiceAccount `sa`, a Pod `p`. */
async function terminatingNamespace(api: TestClient, name: string): Promise<void> {
  const hold = ['example.com/hold']
  assert.equal((await api.post('/api/v1/namespaces', { metadata: { name } })).status, 201)
  assert.equal((await api.post(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'sa', finalizers: hold } })).status, 201)
  const pod = { metadata: { name: 'p', finalizers: hold }, spec: { serviceAccountName: 'sa', containers: [{ name: 'c', image: 'nginx' }] } }
  assert.equal((await api.post(`/api/v1/namespaces/${name}/pods`, pod)).status, 201)
  assert.equal((await api.delete(`/api/v1/namespaces/${name}`)).status, 200)
  assert.equal((await api.get(`/api/v1/namespaces/${name}`)).body.status.phase, 'Terminating')
}

function assertTerminatingRefusal(res: { status: number; body: any }, namespace: string): void {
  assert.equal(res.status, 403, JSON.stringify(res.body))
  assert.match(res.body.message, new RegExp(`unable to create new content in namespace ${namespace} because it is being terminated$`))
  assert.deepEqual(res.body.details.causes, [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }])
}

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

  // Upstream's plugin refuses every create in a terminating namespace, subresources included: a token, an
  // eviction or a binding is new content too (kubectl drain knows the eviction's refusal by its cause).
  it('refuses tokens, evictions and bindings in a terminating namespace with 403, binding nothing', async (t) => {
    const api = await startServer()
    // The namespace controller keeps trying to empty the namespace: its retries end with the server.
    t.after(() => api.server.shutdown())
    await terminatingNamespace(api, 'term')
    assertTerminatingRefusal(await api.post('/api/v1/namespaces/term/serviceaccounts/sa/token', { spec: {} }), 'term')
    const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'term' } }
    assertTerminatingRefusal(await api.post('/api/v1/namespaces/term/pods/p/eviction', eviction), 'term')
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p', namespace: 'term' }, target: { kind: 'Node', name: 'n1' } }
    assertTerminatingRefusal(await api.post('/api/v1/namespaces/term/pods/p/binding', binding), 'term')
    assertTerminatingRefusal(await api.post('/api/v1/namespaces/term/bindings', binding), 'term')
    assertTerminatingRefusal(await api.post('/api/v1/namespaces/term/configmaps', { metadata: { name: 'new' } }), 'term')
    assert.equal((await api.get('/api/v1/namespaces/term/pods/p')).body.spec.nodeName, undefined)
  })

  it('still lets objects in a terminating namespace be updated, so that they can be emptied', async (t) => {
    const api = await startServer()
    t.after(() => api.server.shutdown())
    await terminatingNamespace(api, 'drain')
    const res = await api.update('/api/v1/namespaces/drain/serviceaccounts/sa', (sa) => ({ ...sa, metadata: { ...sa.metadata, finalizers: [] } }))
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  it('answers a LocalSubjectAccessReview in a namespace that does not exist, telling nothing of it', async () => {
    const api = await startServer()
    const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'nowhere' }, spec: { user: 'u', resourceAttributes: { namespace: 'nowhere', verb: 'get', resource: 'pods' } } }
    const res = await api.post('/apis/authorization.k8s.io/v1/namespaces/nowhere/localsubjectaccessreviews', review)
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(typeof res.body.status.allowed, 'boolean')
  })

  it('lets other namespaces be deleted', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    assert.equal((await api.delete('/api/v1/namespaces/team')).status, 200)
  })
})
