/**
 * Coordinated leader election on one store, in process: each server
 * publishes a LeaseCandidate with its binary and emulated versions, and the
 * controllers' lease goes to the candidate of the oldest version; a holder
 * of a newer version is asked to step down (preferredHolder) when an older
 * one joins, and the lease comes back when that one leaves.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer, ApiServerOptions } from '../../core/index.js'
import { CONTROLLERS_LEASE } from '../../core/controllers/server-membership.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases'
const CANDIDATES = '/apis/coordination.k8s.io/v1alpha2/namespaces/kube-system/leasecandidates'

const started: ApiServer[] = []
after(async () => {
  await Promise.all(started.map((s) => s.shutdown()))
})

function options(hostname: string, address: string, emulatedMinor?: number): ApiServerOptions {
  return {
    advertiseAddress: address,
    securePort: 6443,
    runtimeConfig: { 'coordination.k8s.io/v1alpha2': true },
    ...(emulatedMinor ? { emulation: { emulated: { major: 1, minor: emulatedMinor } } } : {}),
    multiServer: {
      hostname,
      sharedStorage: true,
      coordinatedLeaderElection: true,
      leaderElection: { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
      endpointLeases: { ttlMs: 1500, intervalMs: 200 },
      identityLeaseTimings: { renewIntervalMs: 200, gcPeriodMs: 200 },
    },
  }
}

async function serverOn(storage: MemoryStorage, opts: ApiServerOptions): Promise<{ server: ApiServer; client: TestClient }> {
  const server = createTestServer(opts, { storage })
  started.push(server)
  await server.ready
  return { server, client: new TestClient(server) }
}

async function lease(client: TestClient): Promise<any> {
  const res = await client.get(`${LEASES}/${CONTROLLERS_LEASE}`)
  return res.status === 200 ? res.body : undefined
}

async function candidateOf(client: TestClient, emulationVersion: string): Promise<any> {
  const res = await client.get(CANDIDATES)
  return res.body.items?.find((c: any) => c.spec.emulationVersion === emulationVersion)
}

describe('coordinated leader election', () => {
  const storage = new MemoryStorage()

  it('gives the controllers lease to the candidate of the oldest emulated version, and back when it leaves', async () => {
    const newer = await serverOn(storage, options('host-new', '10.0.0.1'))
    await eventually('the newer server is a candidate', async () => (await candidateOf(newer.client, '1.32.0')) !== undefined)
    const newerCandidate = await candidateOf(newer.client, '1.32.0')
    assert.deepEqual(
      { leaseName: newerCandidate.spec.leaseName, binaryVersion: newerCandidate.spec.binaryVersion, strategy: newerCandidate.spec.strategy },
      { leaseName: CONTROLLERS_LEASE, binaryVersion: '1.32.0', strategy: 'OldestEmulationVersion' },
    )
    // Alone, the newer server is elected.
    await eventually('the newer server holds the lease', async () => (await lease(newer.client))?.spec.holderIdentity === newerCandidate.metadata.name, 10_000)
    assert.equal((await lease(newer.client)).spec.strategy, 'OldestEmulationVersion')

    const older = await serverOn(storage, options('host-old', '10.0.0.2', 31))
    await eventually('the older server is a candidate', async () => (await candidateOf(newer.client, '1.31.0')) !== undefined)
    const olderCandidate = await candidateOf(newer.client, '1.31.0')
    assert.equal(olderCandidate.spec.binaryVersion, '1.32.0')
    // The older one takes over: the newer holder was asked to step down.
    await eventually('the older server holds the lease', async () => (await lease(newer.client))?.spec.holderIdentity === olderCandidate.metadata.name, 15_000)
    const handedOver = await lease(newer.client)
    assert.ok(handedOver.spec.leaseTransitions >= 1)
    assert.equal(handedOver.spec.preferredHolder, undefined)

    // The older server leaves: its candidate goes and the lease returns to the newer one.
    await older.server.shutdown()
    await eventually('the lease is back with the newer server', async () => (await lease(newer.client))?.spec.holderIdentity === newerCandidate.metadata.name, 15_000)
    assert.equal(await candidateOf(newer.client, '1.31.0'), undefined)
  })
})
