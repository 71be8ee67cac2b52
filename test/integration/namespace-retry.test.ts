/**
 * A namespace whose deletion cannot finish at once (an object in it held by
 * its finalizer) is looked at again by the namespace controller, without
 * any change to the namespace itself, and goes once the object is released.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventually, startServer } from './harness.js'

describe('namespace deletion waiting on a finalizer', () => {
  it('finishes once the held object is released, without the namespace changing', async () => {
    const api = await startServer()
    try {
      await api.post('/api/v1/namespaces', { metadata: { name: 'held' } })
      const cm = '/api/v1/namespaces/held/configmaps/cfg'
      await api.post('/api/v1/namespaces/held/configmaps', { metadata: { name: 'cfg', finalizers: ['example.com/hold'] } })
      await api.post('/api/v1/namespaces/held/configmaps', { metadata: { name: 'free' } })
      assert.equal((await api.delete('/api/v1/namespaces/held')).status, 200)
      await eventually('the controller emptied what it could', async () => (await api.get('/api/v1/namespaces/held/configmaps/free')).status === 404)
      assert.ok((await api.get(cm)).body.metadata.deletionTimestamp, 'the held object is marked for deletion')
      assert.equal((await api.get('/api/v1/namespaces/held')).body.status.phase, 'Terminating')
      assert.equal((await api.patch(cm, { metadata: { finalizers: null } }, 'application/merge-patch+json')).status, 200)
      await eventually('the namespace is gone', async () => (await api.get('/api/v1/namespaces/held')).status === 404, 15_000)
    } finally {
      await api.server.shutdown()
    }
  })
})
