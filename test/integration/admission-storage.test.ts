/**
 * The storage admission plugins through the API: DefaultStorageClass gives a
 * new claim the default class, StorageObjectInUseProtection keeps a claim in
 * use (and a bound volume) until nothing holds it, and
 * PersistentVolumeClaimResize lets a bound claim grow only when its class allows it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, eventually, startServer, TestClient } from './harness.js'

const SC = '/apis/storage.k8s.io/v1/storageclasses'
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims'
const PV = '/api/v1/persistentvolumes'

const claim = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra },
})

async function server(plugins: string[]): Promise<TestClient> {
  return startServer({ admission: { plugins: plugins as never } })
}

/** Waits until the plugin's index holds the class: a dry-run claim gets it. */
async function untilDefaultIs(api: TestClient, name: string): Promise<void> {
  await eventually(`default class ${name} seen`, async () => (await api.post(`${PVC}?dryRun=All`, claim('probe'))).body.spec?.storageClassName === name)
}

describe('DefaultStorageClass', () => {
  it('gives a claim without a class the newest default class, and leaves an explicit one alone', async () => {
    const api = await server(['DefaultStorageClass'])
    const annotations = { 'storageclass.kubernetes.io/is-default-class': 'true' }
    assert.equal((await api.post(SC, { metadata: { name: 'plain' }, provisioner: 'x' })).status, 201)
    assert.equal((await api.post(SC, { metadata: { name: 'older', annotations }, provisioner: 'x' })).status, 201)
    await untilDefaultIs(api, 'older')
    // Timestamps have second precision: the newer one must be created in a later second.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    assert.equal((await api.post(SC, { metadata: { name: 'newer', annotations }, provisioner: 'x' })).status, 201)
    await untilDefaultIs(api, 'newer')
    const created = await api.post(PVC, claim('data'))
    assert.equal(created.status, 201)
    assert.equal(created.body.spec.storageClassName, 'newer')
    const explicit = await api.post(PVC, claim('mine', { storageClassName: 'plain' }))
    assert.equal(explicit.body.spec.storageClassName, 'plain')
    const none = await api.post(PVC, claim('none', { storageClassName: '' }))
    assert.equal(none.body.spec.storageClassName, '')
  })

  it('leaves the class unset without a default', async () => {
    const api = await server(['DefaultStorageClass'])
    const created = await api.post(PVC, claim('data'))
    assert.equal(created.status, 201)
    assert.equal(created.body.spec.storageClassName, undefined)
  })
})

describe('StorageObjectInUseProtection', () => {
  it('adds the protection finalizers and keeps a claim a scheduled pod uses until the pod goes', async () => {
    const api = await server(['StorageObjectInUseProtection'])
    const pvc = await api.post(PVC, claim('data'))
    assert.deepEqual(pvc.body.metadata.finalizers, ['kubernetes.io/pvc-protection'])
    const pv = await api.post(PV, { metadata: { name: 'vol' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' } } })
    assert.deepEqual(pv.body.metadata.finalizers, ['kubernetes.io/pv-protection'])
    const pod = {
      metadata: { name: 'user' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] },
    }
    assert.equal((await api.post('/api/v1/namespaces/default/pods', pod)).status, 201)
    assert.equal((await api.delete(`${PVC}/data`)).status, 200)
    // Still there, terminating, while the pod uses it.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const held = await api.get(`${PVC}/data`)
    assert.equal(held.status, 200)
    assert.ok(held.body.metadata.deletionTimestamp)
    assert.equal((await api.delete('/api/v1/namespaces/default/pods/user?gracePeriodSeconds=0')).status, 200)
    await eventually('the claim is gone', async () => (await api.get(`${PVC}/data`)).status === 404)
    // An unbound volume goes at once.
    assert.equal((await api.delete(`${PV}/vol`)).status, 200)
    await eventually('the volume is gone', async () => (await api.get(`${PV}/vol`)).status === 404)
  })

  it('releases a claim the store held, terminating, before the server started: its controllers start for it', async () => {
    const storage = new MemoryStorage()
    const options = { admission: { plugins: ['StorageObjectInUseProtection' as never] } }
    const before = createTestServer(options, { storage })
    const api = new TestClient(before)
    await before.ready
    assert.equal((await api.post(PVC, claim('data'))).status, 201)
    const pod = { metadata: { name: 'user' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } }
    assert.equal((await api.post('/api/v1/namespaces/default/pods', pod)).status, 201)
    assert.equal((await api.delete(`${PVC}/data`)).status, 200)
    await before.shutdown()
    const after = createTestServer(options, { storage })
    await after.ready
    try {
      const again = new TestClient(after)
      assert.ok((await again.get(`${PVC}/data`)).body.metadata.deletionTimestamp, 'held while the pod uses it')
      assert.equal((await again.delete('/api/v1/namespaces/default/pods/user?gracePeriodSeconds=0')).status, 200)
      await eventually('the claim is gone', async () => (await again.get(`${PVC}/data`)).status === 404)
    } finally {
      await after.shutdown()
    }
  })

  it('keeps a Bound volume until it is released', async () => {
    const api = await server(['StorageObjectInUseProtection'])
    const pv = await api.post(PV, { metadata: { name: 'vol' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' } } })
    const bound = await api.put(`${PV}/vol/status`, { ...pv.body, status: { phase: 'Bound' } })
    assert.equal(bound.status, 200)
    assert.equal((await api.delete(`${PV}/vol`)).status, 200)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const held = await api.get(`${PV}/vol`)
    assert.equal(held.status, 200)
    assert.equal((await api.put(`${PV}/vol/status`, { ...held.body, status: { phase: 'Released' } })).status, 200)
    await eventually('the volume is gone', async () => (await api.get(`${PV}/vol`)).status === 404)
  })
})

describe('PersistentVolumeClaimResize', () => {
  async function boundClaim(api: TestClient, name: string, storageClassName: string): Promise<any> {
    const created = await api.post(PVC, claim(name, { storageClassName, volumeName: `pv-${name}` }))
    assert.equal(created.status, 201)
    const bound = await api.put(`${PVC}/${name}/status`, { ...created.body, status: { phase: 'Bound', capacity: { storage: '1Gi' } } })
    assert.equal(bound.status, 200)
    return bound.body
  }
  const grown = (pvc: any, size: string) => ({ ...pvc, spec: { ...pvc.spec, resources: { requests: { storage: size } } } })

  it('lets a bound claim of an expandable class grow', async () => {
    const api = await server(['PersistentVolumeClaimResize'])
    await api.post(SC, { metadata: { name: 'elastic' }, provisioner: 'x', allowVolumeExpansion: true })
    const pvc = await boundClaim(api, 'data', 'elastic')
    await eventually('the class is seen', async () => (await api.put(`${PVC}/data?dryRun=All`, grown(pvc, '2Gi'))).status === 200)
    const res = await api.put(`${PVC}/data`, grown(pvc, '2Gi'))
    assert.equal(res.status, 200)
    assert.equal(res.body.spec.resources.requests.storage, '2Gi')
  })

  it('refuses to grow a claim whose class does not allow it with 403, and keeps the size', async () => {
    const api = await server(['PersistentVolumeClaimResize'])
    await api.post(SC, { metadata: { name: 'rigid' }, provisioner: 'x' })
    const pvc = await boundClaim(api, 'data', 'rigid')
    const res = await api.put(`${PVC}/data`, grown(pvc, '2Gi'))
    assert.equal(res.status, 403)
    assert.equal(res.body.reason, 'Forbidden')
    assert.equal(
      res.body.message,
      'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    )
    assert.equal((await api.get(`${PVC}/data`)).body.spec.resources.requests.storage, '1Gi')
  })

  it('refuses to grow a claim that is not bound: its spec is fixed, which validation says before the plugin is asked', async () => {
    const api = await server(['PersistentVolumeClaimResize'])
    const created = await api.post(PVC, claim('data', { storageClassName: 'any' }))
    const res = await api.put(`${PVC}/data`, grown(created.body, '2Gi'))
    assert.equal(res.status, 422)
    assert.match(res.body.message, /^PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n/)
    assert.equal((await api.get(`${PVC}/data`)).body.spec.resources.requests.storage, '1Gi')
  })
})
