/**
 * Several servers on one store, in process: the run-once controllers run on
 * the holder of their lease and move when it goes, every server publishes
 * its identity lease and expired ones are collected, and the `kubernetes`
 * endpoints list every live server. A lone server writes no election lease
 * and finishes a namespace deletion at once.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer, ApiServerOptions } from '../../core/index.js'
import { CONTROLLERS_LEASE } from '../../core/controllers/server-membership.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases'
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

const started: ApiServer[] = []
after(async () => {
  await Promise.all(started.map((s) => s.shutdown()))
})

function fastMembership(hostname: string): ApiServerOptions['multiServer'] {
  return {
    hostname,
    sharedStorage: true,
    leaderElection: { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
    endpointLeases: { ttlMs: 1500, intervalMs: 200 },
    identityLeaseTimings: { renewIntervalMs: 200, gcPeriodMs: 200 },
  }
}

async function serverOn(storage: MemoryStorage, hostname: string, address: string): Promise<TestClient> {
  const server = createTestServer({ multiServer: fastMembership(hostname), advertiseAddress: address, securePort: 6443 }, { storage })
  started.push(server)
  await server.ready
  return new TestClient(server)
}

async function controllersHolder(client: TestClient): Promise<string> {
  const res = await client.get(`${LEASES}/${CONTROLLERS_LEASE}`)
  return res.status === 200 ? (res.body.spec.holderIdentity as string) : ''
}

async function identityOf(client: TestClient, hostname: string): Promise<any> {
  const res = await client.get(`${LEASES}?labelSelector=apiserver.kubernetes.io/identity%3Dkube-apiserver`)
  return res.body.items.find((l: any) => l.metadata.labels['kubernetes.io/hostname'] === hostname)
}

async function endpointAddresses(client: TestClient): Promise<string[]> {
  const res = await client.get('/api/v1/namespaces/default/endpoints/kubernetes')
  return res.status === 200 ? (res.body.subsets?.[0]?.addresses ?? []).map((a: { ip: string }) => a.ip) : []
}

describe('several servers on one store', () => {
  const storage = new MemoryStorage()
  let a: TestClient
  let b: TestClient

  it('gives the controllers lease to one server, with upstream leader election fields', async () => {
    a = await serverOn(storage, 'host-a', '10.0.0.1')
    b = await serverOn(storage, 'host-b', '10.0.0.2')
    const lease = (await a.get(`${LEASES}/${CONTROLLERS_LEASE}`)).body
    const identityA = await identityOf(a, 'host-a')
    assert.ok(identityA, 'server a has an identity lease')
    // The first server took it at once; the second waits.
    assert.ok(lease.spec.holderIdentity.startsWith(`${identityA.metadata.name}_`), lease.spec.holderIdentity)
    assert.equal(lease.spec.leaseDurationSeconds, 2)
    assert.match(lease.spec.acquireTime, MICRO_TIME)
    assert.match(lease.spec.renewTime, MICRO_TIME)
    assert.equal(lease.spec.leaseTransitions, 0)
  })

  it('publishes an identity lease per server, labelled and renewed', async () => {
    const identityB = await identityOf(b, 'host-b')
    assert.match(identityB.metadata.name, /^apiserver-[a-z2-7]{26}$/)
    assert.ok(identityB.spec.holderIdentity.startsWith(`${identityB.metadata.name}_`))
    assert.equal(identityB.spec.leaseDurationSeconds, 3600)
    const first = identityB.spec.renewTime
    await eventually('the identity lease is renewed', async () => (await identityOf(b, 'host-b')).spec.renewTime !== first)
  })

  it('lists every live server in the kubernetes endpoints', async () => {
    await eventually('both addresses are listed', async () => (await endpointAddresses(b)).join(',') === '10.0.0.1,10.0.0.2')
    const slice = (await a.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).body
    assert.deepEqual(
      slice.endpoints.map((e: { addresses: string[] }) => e.addresses[0]),
      ['10.0.0.1', '10.0.0.2'],
    )
  })

  it('finishes a namespace deletion asked of the server that does not lead', async () => {
    assert.equal((await b.post('/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201)
    assert.equal((await b.post('/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'c' } })).status, 201)
    assert.equal((await b.delete('/api/v1/namespaces/doomed')).status, 200)
    await eventually('the namespace is gone', async () => (await b.get('/api/v1/namespaces/doomed')).status === 404)
  })

  it('moves the controllers to the other server when the leader shuts down, and drops its address', async () => {
    const identityB = await identityOf(b, 'host-b')
    await a.server.shutdown()
    await eventually(
      'server b holds the controllers lease',
      async () => (await controllersHolder(b)).startsWith(`${identityB.metadata.name}_`),
      10_000,
    )
    const lease = (await b.get(`${LEASES}/${CONTROLLERS_LEASE}`)).body
    assert.equal(lease.spec.leaseTransitions, 1)
    await eventually('only b is listed', async () => (await endpointAddresses(b)).join(',') === '10.0.0.2', 10_000)
    assert.equal((await b.post('/api/v1/namespaces', { metadata: { name: 'doomed-too' } })).status, 201)
    assert.equal((await b.delete('/api/v1/namespaces/doomed-too')).status, 200)
    await eventually('the namespace is gone', async () => (await b.get('/api/v1/namespaces/doomed-too')).status === 404)
  })

  it('deletes the identity lease of a server that stopped renewing it', async () => {
    const stale = {
      metadata: { name: 'apiserver-gone', labels: { 'apiserver.kubernetes.io/identity': 'kube-apiserver' } },
      spec: { holderIdentity: 'apiserver-gone_1', leaseDurationSeconds: 1, renewTime: '2020-01-01T00:00:00.000000Z' },
    }
    const live = { ...stale, metadata: { ...stale.metadata, name: 'apiserver-live' }, spec: { ...stale.spec, leaseDurationSeconds: 3600, renewTime: new Date().toISOString().replace('Z', '000Z') } }
    assert.equal((await b.post(LEASES, stale)).status, 201)
    assert.equal((await b.post(LEASES, live)).status, 201)
    await eventually('the expired identity lease is gone', async () => (await b.get(`${LEASES}/apiserver-gone`)).status === 404)
    assert.equal((await b.get(`${LEASES}/apiserver-live`)).status, 200)
  })
})

describe('a server alone on its store', () => {
  it('writes no election lease and runs its controllers at once', async () => {
    const server = createTestServer({ multiServer: { hostname: 'alone' } })
    started.push(server)
    await server.ready
    const client = new TestClient(server)
    assert.equal((await client.get(`${LEASES}/${CONTROLLERS_LEASE}`)).status, 404)
    assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: 'short-lived' } })).status, 201)
    assert.equal((await client.delete('/api/v1/namespaces/short-lived')).status, 200)
    await eventually('the namespace is gone', async () => (await client.get('/api/v1/namespaces/short-lived')).status === 404)
    assert.ok(await identityOf(client, 'alone'), 'the identity lease is published')
  })
})
