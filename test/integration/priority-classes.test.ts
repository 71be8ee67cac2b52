/**
 * The system priority classes a server creates at start (upstream's
 * `scheduling/bootstrap-system-priority-classes` post-start hook): present
 * with upstream's values, kept from deletion, never overwritten on a restart,
 * recreated when missing, and absent when switched off or not served.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, startServer, TestClient } from './harness.js'

const PRIORITY_CLASSES = '/apis/scheduling.k8s.io/v1/priorityclasses'
const HOOK_CHECK = 'poststarthook/scheduling/bootstrap-system-priority-classes'

const names = (list: { body: { items: { metadata: { name: string } }[] } }) => list.body.items.map((i) => i.metadata.name)

async function startOn(storage: MemoryStorage): Promise<TestClient> {
  const server = createTestServer({ garbageCollector: false }, { storage })
  await server.ready
  return new TestClient(server)
}

describe('system priority classes at start', () => {
  it('creates system-node-critical and system-cluster-critical with upstream’s values', async () => {
    const api = await startServer()
    const list = await api.get(PRIORITY_CLASSES)
    assert.equal(list.status, 200)
    assert.deepEqual(names(list), ['system-cluster-critical', 'system-node-critical'])

    const node = (await api.get(`${PRIORITY_CLASSES}/system-node-critical`)).body
    assert.equal(node.kind, 'PriorityClass')
    assert.equal(node.apiVersion, 'scheduling.k8s.io/v1')
    assert.equal(node.value, 2_000_001_000)
    assert.equal(node.globalDefault, undefined)
    assert.equal(node.preemptionPolicy, 'PreemptLowerPriority')
    assert.equal(node.description, 'Used for system critical pods that must not be moved from their current node.')
    assert.ok(node.metadata.uid && node.metadata.creationTimestamp, 'stored through the registry')

    const cluster = (await api.get(`${PRIORITY_CLASSES}/system-cluster-critical`)).body
    assert.equal(cluster.value, 2_000_000_000)
    assert.equal(cluster.preemptionPolicy, 'PreemptLowerPriority')
    assert.equal(cluster.description, 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.')
  })

  it('refuses to delete either of them and keeps them', async () => {
    const api = await startServer()
    for (const name of ['system-node-critical', 'system-cluster-critical']) {
      const res = await api.delete(`${PRIORITY_CLASSES}/${name}`)
      assert.equal(res.status, 403, res.text)
      assert.equal(res.body.message, `priorityclasses.scheduling.k8s.io "${name}" is forbidden: this is a system priority class and cannot be deleted`)
      assert.equal((await api.get(`${PRIORITY_CLASSES}/${name}`)).status, 200)
    }
  })

  it('refuses a second create of a system class as AlreadyExists', async () => {
    const api = await startServer()
    const res = await api.post(PRIORITY_CLASSES, { metadata: { name: 'system-cluster-critical' }, value: 2_000_000_000 })
    assert.equal(res.status, 409, res.text)
    assert.equal(res.body.reason, 'AlreadyExists')
  })

  it('leaves a stored class as it is on restart and recreates one that is missing', async () => {
    const storage = new MemoryStorage()
    const first = await startOn(storage)
    const stored = (await first.get(`${PRIORITY_CLASSES}/system-cluster-critical`)).body
    const edited = await first.put(`${PRIORITY_CLASSES}/system-cluster-critical`, { ...stored, description: 'ours now' })
    assert.equal(edited.status, 200, edited.text)
    const nodeUid = (await first.get(`${PRIORITY_CLASSES}/system-node-critical`)).body.metadata.uid
    await first.server.shutdown()
    // Gone behind the API's back (the API refuses the delete).
    await storage.delete('/registry/priorityclasses/system-node-critical')

    const second = await startOn(storage)
    const kept = (await second.get(`${PRIORITY_CLASSES}/system-cluster-critical`)).body
    assert.equal(kept.description, 'ours now')
    assert.equal(kept.metadata.resourceVersion, edited.body.metadata.resourceVersion)
    const recreated = await second.get(`${PRIORITY_CLASSES}/system-node-critical`)
    assert.equal(recreated.status, 200)
    assert.equal(recreated.body.value, 2_000_001_000)
    assert.notEqual(recreated.body.metadata.uid, nodeUid)
    await second.server.shutdown()
  })

  it('reports the post-start hook in /healthz, /livez and /readyz', async () => {
    const api = await startServer()
    for (const endpoint of ['healthz', 'livez', 'readyz']) {
      const verbose = await api.get(`/${endpoint}?verbose`)
      assert.equal(verbose.status, 200)
      assert.match(verbose.text, new RegExp(`^\\[\\+\\]${HOOK_CHECK} ok$`, 'm'))
      const one = await api.get(`/${endpoint}/${HOOK_CHECK}`)
      assert.deepEqual([one.status, one.text], [200, 'ok'])
    }
  })

  it('creates nothing and lists no hook with bootstrapPriorityClasses: false', async () => {
    const api = await startServer({ bootstrapPriorityClasses: false })
    assert.deepEqual(names(await api.get(PRIORITY_CLASSES)), [])
    assert.doesNotMatch((await api.get('/readyz?verbose')).text, /bootstrap-system-priority-classes/)
    assert.equal((await api.get(`/readyz/${HOOK_CHECK}`)).status, 404)
  })

  it('starts without the hook when scheduling.k8s.io/v1 is not served', async () => {
    const storage = new MemoryStorage()
    const server = createTestServer({ runtimeConfig: { 'scheduling.k8s.io/v1': false } }, { storage })
    await server.ready
    const api = new TestClient(server)
    assert.equal((await api.get('/readyz')).text, 'ok')
    assert.equal((await api.get(`/readyz/${HOOK_CHECK}`)).status, 404)
    assert.equal((await api.get(PRIORITY_CLASSES)).status, 404)
    assert.equal(await storage.count('/registry/priorityclasses/'), 0)
    await server.shutdown()
  })
})
