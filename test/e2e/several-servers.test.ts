/**
 * Three daemons on one real etcd, as a user runs them behind a load
 * balancer: each on its own loopback address and the same port. One holds
 * the controllers' lease; killed with SIGKILL, another takes over and
 * finishes namespace deletions; the `kubernetes` endpoints follow the live
 * servers; a write through one is seen by a watch on another; an idle
 * cluster writes only its lease renewals.
 */
import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { after, before, describe, it } from 'node:test'
import { apiServerId } from '../../core/controllers/apiserver-identity.js'
import { CONTROLLERS_LEASE } from '../../core/controllers/server-membership.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon, freePort } from './daemon.js'

const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3']
// Short leader election timings, so that a takeover is quick to see.
const LEADERSHIP = ['--coordinated-leadership-lease-duration=4s', '--coordinated-leadership-renew-deadline=3s', '--coordinated-leadership-retry-period=1s']

async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 90_000): Promise<void> {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

describe('three servers on one etcd', () => {
  let etcd: EtcdServer
  const daemons: Daemon[] = []
  const ids: string[] = []
  let port = 0

  before(async () => {
    etcd = await EtcdServer.start()
    port = await freePort()
    for (const address of ADDRESSES) {
      daemons.push(await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, ...LEADERSHIP], { port, bindAddress: address }))
      ids.push(await apiServerId(hostname().toLowerCase(), address, port))
    }
  })
  after(async () => {
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd?.destroy()
  })

  const live = () => daemons.filter((d) => d.process.exitCode === null && d.process.signalCode === null)
  const holder = async (via: Daemon): Promise<number> => {
    const r = await via.kubectl('get', 'lease', '-n', 'kube-system', CONTROLLERS_LEASE, '-o', 'jsonpath={.spec.holderIdentity}')
    return ids.findIndex((id) => r.stdout.startsWith(`${id}_`))
  }
  const endpointIPs = async (via: Daemon): Promise<string> =>
    (await via.kubectl('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets[0].addresses[*].ip}')).stdout

  it('publishes one identity lease per server', async () => {
    const names = (await daemons[0]!.ok('get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'name')).trim().split('\n')
    assert.deepEqual(names.sort(), ids.map((id) => `lease.coordination.k8s.io/${id}`).sort())
  })

  it('gives the controllers lease to the first server and lists every server in the kubernetes endpoints', async () => {
    assert.equal(await holder(daemons[2]!), 0)
    await eventually('the endpoints list the three servers', async () => (await endpointIPs(daemons[1]!)) === ADDRESSES.join(' '))
  })

  it('shows a write through one server to a watch on another', async () => {
    const watch = daemons[1]!.kubectlStream('get', 'configmaps', '-n', 'default', '-w', '--output-watch-events', '-o', 'name')
    try {
      await eventually('the watch is open', async () => (await daemons[1]!.kubectl('get', 'configmaps', '-n', 'default')).code === 0, 10_000)
      await new Promise((r) => setTimeout(r, 1000))
      await daemons[2]!.ok('create', 'configmap', 'from-third', '-n', 'default', '--from-literal=a=b')
      await eventually('the watch on the second server sees the configmap', async () => watch.output().includes('configmap/from-third'))
    } finally {
      watch.child.kill()
    }
  })

  it('writes nothing in an idle cluster but the lease renewals, and the endpoints stay put', async () => {
    const revision = async (): Promise<number> =>
      Number(JSON.parse(await daemons[0]!.ok('get', '--raw', '/api/v1/namespaces?limit=1')).metadata.resourceVersion)
    const endpointsVersion = async () => daemons[0]!.ok('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.metadata.resourceVersion}')
    const [startRevision, startEndpoints, startedAt] = [await revision(), await endpointsVersion(), Date.now()]
    await new Promise((r) => setTimeout(r, 20_000))
    const writes = (await revision()) - startRevision
    const seconds = (Date.now() - startedAt) / 1000
    // The leader's renewal each second, and each server's identity and endpoint records every ten seconds.
    const renewals = seconds * (1 + (2 * ADDRESSES.length) / 10)
    console.log(`idle cluster of ${ADDRESSES.length} servers: ${writes} writes in ${seconds.toFixed(1)}s (${((writes / seconds) * 60).toFixed(0)} per minute)`)
    assert.ok(writes <= 2 * renewals + 5, `${writes} writes in ${seconds}s`)
    assert.equal(await endpointsVersion(), startEndpoints, 'the kubernetes endpoints were rewritten in an idle cluster')
  })

  it('moves the controllers to another server when the holder is killed, and finishes namespace deletions', async () => {
    const first = await holder(daemons[1]!)
    const survivor = daemons[(first + 1) % daemons.length]!
    await survivor.ok('create', 'namespace', 'doomed')
    await survivor.ok('create', 'configmap', 'c', '-n', 'doomed', '--from-literal=a=b')
    await daemons[first]!.kill()
    await survivor.ok('delete', 'namespace', 'doomed', '--wait=false')
    await eventually('another server holds the lease', async () => {
      const now = await holder(survivor)
      return now >= 0 && now !== first
    })
    await eventually('the namespace is gone', async () => (await survivor.kubectl('get', 'namespace', 'doomed')).code !== 0)
    const remaining = ADDRESSES.filter((_, i) => i !== first).join(' ')
    await eventually('the endpoints drop the killed server', async () => (await endpointIPs(survivor)) === remaining)
    assert.equal(live().length, 2)
  })
})
