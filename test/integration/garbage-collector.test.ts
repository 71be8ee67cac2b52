/** The in-process garbage collector: dependents of deleted owners, and the three propagation policies. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OwnerReference } from '../../core/machinery/object.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, eventually, startServer, TestClient } from './harness.js'
import { countTurns } from '../helpers/event-loop-turns.js'

const PODS = '/api/v1/namespaces/default/pods'
const CMS = '/api/v1/namespaces/default/configmaps'
const RS = '/apis/apps/v1/namespaces/default/replicasets'
const SECRETS = '/api/v1/namespaces/default/secrets'

async function createReplicaSet(api: TestClient, name: string): Promise<OwnerReference> {
  const labels = { app: name }
  const res = await api.post(RS, {
    metadata: { name },
    spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  })
  assert.equal(res.status, 201, res.text)
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: res.body.metadata.uid }
}

async function createPod(api: TestClient, name: string, owners: OwnerReference[], extra: Record<string, unknown> = {}): Promise<void> {
  const res = await api.post(PODS, {
    metadata: { name, ownerReferences: owners, ...extra },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  })
  assert.equal(res.status, 201, res.text)
}

async function createOwned(api: TestClient, path: string, name: string, owners: OwnerReference[]): Promise<void> {
  if (path === PODS) return createPod(api, name, owners)
  const res = await api.post(path, { metadata: { name, ownerReferences: owners } })
  assert.equal(res.status, 201, res.text)
}

const gone = (api: TestClient, path: string) => async () => (await api.get(path)).status === 404

describe('garbage collector', () => {
  it('deletes the pods of a ReplicaSet deleted in the background', async () => {
    const api = await startServer()
    const owner = await createReplicaSet(api, 'web')
    await createPod(api, 'web-1', [{ ...owner, controller: true, blockOwnerDeletion: true }])
    await createPod(api, 'web-2', [{ ...owner, controller: true, blockOwnerDeletion: true }])
    const res = await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Background' } })
    assert.equal(res.status, 200, res.text)
    assert.equal((await api.get(`${RS}/web`)).status, 404)
    await eventually('web-1 is collected', gone(api, `${PODS}/web-1`))
    await eventually('web-2 is collected', gone(api, `${PODS}/web-2`))
  })

  it('deletes a dependent whose owner never existed, and leaves one whose owner kind is unknown alone', async () => {
    const api = await startServer()
    await createPod(api, 'unknown-kind', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'f0e5a1d2-0000-4000-8000-000000000001' }])
    await createPod(api, 'no-owner', [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'never', uid: 'f0e5a1d2-0000-4000-8000-000000000002' }])
    await eventually('no-owner is collected', gone(api, `${PODS}/no-owner`))
    const kept = await api.get(`${PODS}/unknown-kind`)
    assert.equal(kept.status, 200)
    assert.equal(kept.body.metadata.ownerReferences.length, 1)
  })

  it('Orphan: removes the owner reference from the pods, then the ReplicaSet goes', async () => {
    const api = await startServer()
    const owner = await createReplicaSet(api, 'web')
    await createPod(api, 'web-1', [{ ...owner, controller: true, blockOwnerDeletion: true }], { labels: { app: 'web' } })
    const res = await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Orphan' } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.metadata.finalizers, ['orphan'])
    await eventually('the ReplicaSet is deleted', gone(api, `${RS}/web`))
    const pod = await api.get(`${PODS}/web-1`)
    assert.equal(pod.status, 200)
    assert.equal(pod.body.metadata.ownerReferences, undefined)
    assert.deepEqual(pod.body.metadata.labels, { app: 'web' })
  })

  // Upstream's conformance-suite spec "should orphan pods created by rc if deleteOptions.OrphanDependents is nil".
  it('orphans the pods of a ReplicationController deleted without a policy, as v1 does by default', async () => {
    const api = await startServer()
    const labels = { app: 'legacy' }
    const RCS = '/api/v1/namespaces/default/replicationcontrollers'
    const created = await api.post(RCS, { metadata: { name: 'legacy' }, spec: { replicas: 0, selector: labels, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } })
    assert.equal(created.status, 201, created.text)
    const owner = { apiVersion: 'v1', kind: 'ReplicationController', name: 'legacy', uid: created.body.metadata.uid, controller: true, blockOwnerDeletion: true }
    await createPod(api, 'legacy-1', [owner], { labels })
    assert.equal((await api.delete(`${RCS}/legacy`)).status, 200)
    await eventually('the ReplicationController is deleted', gone(api, `${RCS}/legacy`))
    const pod = await api.get(`${PODS}/legacy-1`)
    assert.equal(pod.status, 200)
    assert.equal(pod.body.metadata.ownerReferences, undefined)
  })

  it('Foreground: the owner waits, marked, until its blocking dependents are gone', async () => {
    const api = await startServer()
    const owner = await createReplicaSet(api, 'web')
    const ref = { ...owner, controller: true, blockOwnerDeletion: true }
    await createPod(api, 'web-1', [ref])
    // A finalizer of its own keeps this pod (and so its owner) until the test lets go.
    await createPod(api, 'web-2', [ref], { finalizers: ['example.com/hold'] })
    const res = await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Foreground' } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.metadata.finalizers, ['foregroundDeletion'])

    await eventually('web-1 is deleted', gone(api, `${PODS}/web-1`))
    await eventually('web-2 is marked for deletion', async () => Boolean((await api.get(`${PODS}/web-2`)).body.metadata.deletionTimestamp))
    const waiting = await api.get(`${RS}/web`)
    assert.equal(waiting.status, 200)
    assert.ok(waiting.body.metadata.deletionTimestamp)
    assert.deepEqual(waiting.body.metadata.finalizers, ['foregroundDeletion'])

    const release = await api.patch(`${PODS}/web-2`, { metadata: { finalizers: null } }, 'application/merge-patch+json')
    assert.equal(release.status, 200, release.text)
    await eventually('web-2 is gone', gone(api, `${PODS}/web-2`))
    await eventually('the ReplicaSet is deleted', gone(api, `${RS}/web`))
  })

  it('Foreground: a dependent without blockOwnerDeletion does not hold its owner', async () => {
    const api = await startServer()
    const owner = await createReplicaSet(api, 'web')
    await createPod(api, 'web-1', [owner], { finalizers: ['example.com/hold'] })
    await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Foreground' } })
    await eventually('the ReplicaSet is deleted', gone(api, `${RS}/web`))
    // Its owner gone, the pod is collected in turn (held by its own finalizer, it is only marked).
    await eventually('web-1 is marked for deletion', async () => Boolean((await api.get(`${PODS}/web-1`)).body.metadata.deletionTimestamp))
  })

  it('keeps a dependent with a remaining owner, dropping the reference to the deleted one', async () => {
    const api = await startServer()
    const a = await createReplicaSet(api, 'a')
    const b = await createReplicaSet(api, 'b')
    await createPod(api, 'shared', [a, b])
    const res = await api.delete(`${RS}/a`)
    assert.equal(res.status, 200, res.text)
    await eventually('the reference to a is removed', async () => {
      const pod = await api.get(`${PODS}/shared`)
      assert.equal(pod.status, 200, 'the pod with a live owner is kept')
      return pod.body.metadata.ownerReferences.length === 1
    })
    const pod = await api.get(`${PODS}/shared`)
    assert.deepEqual(
      pod.body.metadata.ownerReferences.map((o: OwnerReference) => o.name),
      ['b'],
    )
    // Once the last owner goes, the pod goes too.
    await api.delete(`${RS}/b`)
    await eventually('shared is collected', gone(api, `${PODS}/shared`))
  })

  it('collects nothing with garbageCollector: false', async () => {
    const api = await startServer({ garbageCollector: false })
    const owner = await createReplicaSet(api, 'web')
    await createPod(api, 'web-1', [owner])
    const held = await createReplicaSet(api, 'held')
    await createPod(api, 'held-1', [{ ...held, blockOwnerDeletion: true }])
    assert.equal((await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Background' } })).status, 200)
    assert.equal((await api.delete(`${RS}/held`, { body: { propagationPolicy: 'Foreground' } })).status, 200)
    // A later write, and a read after it: a collector would have had the events of both deletions by now.
    assert.equal((await api.post(CMS, { metadata: { name: 'later' } })).status, 201)
    await api.get(`${CMS}/later`)
    assert.equal((await api.get(`${PODS}/web-1`)).status, 200)
    assert.equal((await api.get(`${PODS}/held-1`)).status, 200)
    const marked = await api.get(`${RS}/held`)
    assert.equal(marked.status, 200)
    assert.deepEqual(marked.body.metadata.finalizers, ['foregroundDeletion'])
  })
})

describe('garbage collector started on demand', () => {
  const MISSING_OWNER: OwnerReference = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'never', uid: 'f0e5a1d2-0000-4000-8000-0000000000aa' }

  // No component of the server reads Secrets: their watch cache waits for its first use, and the collector hears of them through the store.
  for (const [resource, path] of [
    ['a pod', PODS],
    ['a secret', SECRETS],
  ] as const) {
    it(`starts for ${resource} naming an owner that another server on the store wrote`, async () => {
      const storage = new MemoryStorage()
      const collecting = createTestServer({}, { storage })
      await collecting.ready
      // Started second, so the first leads the controllers; it collects nothing itself.
      const writing = createTestServer({ garbageCollector: false }, { storage })
      await writing.ready
      try {
        const api = new TestClient(writing)
        await createOwned(api, path, 'orphan', [MISSING_OWNER])
        await eventually('the orphan is collected', gone(api, `${path}/orphan`))
      } finally {
        await writing.shutdown()
        await collecting.shutdown()
      }
    })

    it(`starts for ${resource} naming an owner that the store held before the server started`, async () => {
      const storage = new MemoryStorage()
      const before = createTestServer({ garbageCollector: false }, { storage })
      await before.ready
      await createOwned(new TestClient(before), path, 'orphan', [MISSING_OWNER])
      await before.shutdown()
      const after = createTestServer({}, { storage })
      await after.ready
      try {
        await eventually('the orphan is collected', gone(new TestClient(after), `${path}/orphan`))
      } finally {
        await after.shutdown()
      }
    })
  }

  it('finishes Foreground and Orphan deletions on a server that never held an owned object', async () => {
    const api = await startServer()
    for (const propagationPolicy of ['Foreground', 'Orphan']) {
      const name = propagationPolicy.toLowerCase()
      assert.equal((await api.post(CMS, { metadata: { name } })).status, 201)
      const res = await api.delete(`${CMS}/${name}`, { body: { propagationPolicy } })
      assert.equal(res.status, 200, res.text)
      await eventually(`${name} is deleted`, gone(api, `${CMS}/${name}`))
    }
  })

  for (const [what, options] of [
    ['without a watch cache', { watchCache: false }],
    ['with the pods stored without one', { watchCacheSizes: { pods: 0 } }],
  ] as const) {
    it(`collects ${what}: the collector starts at once`, async () => {
      const api = await startServer(options)
      const owner = await createReplicaSet(api, 'web')
      await createPod(api, 'web-1', [{ ...owner, controller: true }])
      assert.equal((await api.delete(`${RS}/web`, { body: { propagationPolicy: 'Background' } })).status, 200)
      await eventually('web-1 is collected', gone(api, `${PODS}/web-1`))
    })
  }
})

describe('DELETE of a collection with several workers', () => {
  it('deletes every selected object and answers them in the list order', async () => {
    const api = await startServer({ deleteCollectionWorkers: 4, garbageCollector: false })
    const names = Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(2, '0')}`)
    for (const name of names) assert.equal((await api.post(CMS, { metadata: { name, labels: { batch: 'x' } } })).status, 201)
    assert.equal((await api.post(CMS, { metadata: { name: 'other' } })).status, 201)
    const res = await api.delete(`${CMS}?labelSelector=batch%3Dx`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'ConfigMapList')
    assert.deepEqual(
      res.body.items.map((o: { metadata: { name: string } }) => o.metadata.name),
      names,
    )
    const left = await api.get(CMS)
    assert.deepEqual(
      left.body.items.map((o: { metadata: { name: string } }) => o.metadata.name),
      ['other'],
    )
  })

  it('keeps the objects held by finalizers, marked, and deletes the rest', async () => {
    const api = await startServer({ deleteCollectionWorkers: 3, garbageCollector: false })
    for (let i = 0; i < 6; i++) {
      const finalizers = i % 2 ? ['example.com/keep'] : undefined
      assert.equal((await api.post(CMS, { metadata: { name: `c${i}`, finalizers } })).status, 201)
    }
    const res = await api.delete(CMS)
    assert.equal(res.status, 200, res.text)
    const left = await api.get(CMS)
    assert.deepEqual(
      left.body.items.map((o: { metadata: { name: string; deletionTimestamp?: string } }) => [o.metadata.name, Boolean(o.metadata.deletionTimestamp)]),
      [
        ['c1', true],
        ['c3', true],
        ['c5', true],
      ],
    )
  })
})

// On the in-memory store every step of the collector ends in the turn it began, so one item's end started the
// next at once: a foreground deletion of thousands of dependents held the thread until all were gone, no socket
// read, no timer run meanwhile. The turns of the event loop while it works are counted.
describe('garbage collector beside other requests', () => {
  it('lets the event loop turn while it deletes 3,000 dependents of an owner deleted in the foreground', async () => {
    const api = await startServer()
    const owner = await api.post(CMS, { metadata: { name: 'owner' } })
    const ref: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.body.metadata.uid, blockOwnerDeletion: true }
    for (let i = 0; i < 3000; i++) await createOwned(api, CMS, `dep-${i}`, [ref])
    const turns = countTurns()
    assert.equal((await api.delete(`${CMS}/owner`, { body: { propagationPolicy: 'Foreground' } })).status, 200)
    await eventually('the owner is gone', gone(api, `${CMS}/owner`), 60_000)
    const counted = turns.stop()
    assert.ok(counted >= 10, `${counted} turns of the event loop while 3,000 dependents were deleted`)
    await api.server.shutdown()
  })
})
