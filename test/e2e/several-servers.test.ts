/**
 * Three daemons on a three-member etcd, as a user runs them behind a load
 * balancer: each on its own loopback address and the same port, each given
 * every etcd member, and a client whose requests go to one server after
 * another. A write through one is seen by a watch on another; an idle
 * cluster writes only its lease renewals; the server holding the
 * controllers' lease, killed with SIGKILL while namespaces are being
 * deleted, is replaced by another that finishes the deletions; with the
 * etcd leader killed too, the two servers left go on reading and writing on
 * the two members left; the `kubernetes` endpoints drop the killed server.
 */
import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { after, before, describe, it } from 'node:test'
import { apiServerId } from '../../core/controllers/apiserver-identity.js'
import { CONTROLLERS_LEASE } from '../../core/controllers/server-membership.js'
import { type EtcdCluster, EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon, freePort } from './daemon.js'

const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3']
// Short leader election timings, so that a takeover is quick to see.
const LEADERSHIP = ['--coordinated-leadership-lease-duration=4s', '--coordinated-leadership-renew-deadline=3s', '--coordinated-leadership-retry-period=1s']

async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('three servers on a three-member etcd', () => {
  let etcd: EtcdCluster | undefined
  const daemons: Daemon[] = []
  const ids: string[] = []
  let port = 0
  let turn = 0
  /** The server killed while it held the controllers' lease. */
  let killed = -1

  before(async () => {
    etcd = await EtcdServer.startCluster(3)
    port = await freePort()
    const urls = etcd.clientUrls
    // The first server bootstraps the cluster and takes the controllers' lease; the others join it.
    const start = (i: number) => {
      // Each server lists the members in another order, as a real deployment might.
      const servers = [...urls.slice(i), ...urls.slice(0, i)].join(',')
      return Daemon.start([`--etcd-servers=${servers}`, ...LEADERSHIP], { port, bindAddress: ADDRESSES[i] })
    }
    daemons.push(await start(0))
    daemons.push(...(await Promise.all([start(1), start(2)])))
    for (const address of ADDRESSES) ids.push(await apiServerId(hostname().toLowerCase(), address, port))
  })
  after(async () => {
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd?.destroy()
  })

  const live = () => daemons.filter((d) => d.process.exitCode === null && d.process.signalCode === null)
  /** The client behind the load balancer: each request to the next live server. */
  const anyServer = (): Daemon => {
    const servers = live()
    return servers[turn++ % servers.length]!
  }
  const holder = async (via: Daemon): Promise<number> => {
    const r = await via.kubectl('get', 'lease', '-n', 'kube-system', CONTROLLERS_LEASE, '-o', 'jsonpath={.spec.holderIdentity}')
    return ids.findIndex((id) => r.stdout.startsWith(`${id}_`))
  }
  const endpointIPs = async (via: Daemon): Promise<string> =>
    (await via.kubectl('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets[0].addresses[*].ip}')).stdout

  it('publishes one identity lease per server', async () => {
    const names = (await anyServer().ok('get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'name')).trim().split('\n')
    assert.deepEqual(names.sort(), ids.map((id) => `lease.coordination.k8s.io/${id}`).sort())
  })

  it('gives the controllers lease to the first server and lists every server in the kubernetes endpoints', async () => {
    assert.equal(await holder(anyServer()), 0)
    await eventually('the endpoints list the three servers', async () => (await endpointIPs(anyServer())) === ADDRESSES.join(' '))
  })

  it('shows a write through one server to a watch on another', async () => {
    await daemons[0]!.ok('create', 'configmap', 'before-watch', '-n', 'default', '--from-literal=a=b')
    const watch = daemons[1]!.kubectlStream('get', 'configmaps', '-n', 'default', '-w', '--output-watch-events', '-o', 'name')
    try {
      // The watch has listed what was there: it is open.
      await eventually('the watch is open', async () => watch.output().includes('configmap/before-watch'), 10_000)
      await daemons[2]!.ok('create', 'configmap', 'from-third', '-n', 'default', '--from-literal=a=b')
      await eventually('the watch on the second server sees the configmap', async () => watch.output().includes('configmap/from-third'))
    } finally {
      watch.child.kill()
    }
  })

  it('writes nothing in an idle cluster but the lease renewals, each on its schedule, and the endpoints stay put', async () => {
    const endpointsVersion = async () => daemons[0]!.ok('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.metadata.resourceVersion}')
    const startEndpoints = await endpointsVersion()
    // Every write etcd makes, by key, read from etcd itself: a write the renewals do not account for fails by name.
    const client = etcd!.members[0]!.client()
    const writes = new Map<string, number>()
    const watcher = await client.watch().prefix('/registry/').create()
    const count = (key: string) => writes.set(key, (writes.get(key) ?? 0) + 1)
    watcher.on('put', (kv) => count(kv.key.toString()))
    watcher.on('delete', (kv) => count(`deleted ${kv.key.toString()}`))
    const startedAt = Date.now()
    try {
      await new Promise((r) => setTimeout(r, 6_000))
    } finally {
      await watcher.cancel()
      client.close()
    }
    const seconds = (Date.now() - startedAt) / 1000
    const table = [...writes].map(([key, n]) => `${n} ${key}`).join('\n')
    // The leader renews the controllers' lease every retry period (1 s here); each server its identity lease and its
    // endpoint record every ten seconds. One more of each for a renewal at either edge of the window.
    const allowed = (key: string): number => {
      if (key === `/registry/leases/kube-system/${CONTROLLERS_LEASE}`) return Math.ceil(seconds) + 1
      if (ids.some((id) => key === `/registry/leases/kube-system/${id}`)) return Math.ceil(seconds / 10) + 1
      if (ADDRESSES.some((address) => key === `/registry/masterleases/${address}`)) return Math.ceil(seconds / 10) + 1
      return 0
    }
    for (const [key, n] of writes) assert.ok(n <= allowed(key), `${key} was written ${n} times in ${seconds} s:\n${table}`)
    assert.ok((writes.get(`/registry/leases/kube-system/${CONTROLLERS_LEASE}`) ?? 0) >= Math.floor(seconds) - 2, `the controllers' lease was not renewed:\n${table}`)
    assert.equal(await endpointsVersion(), startEndpoints, 'the kubernetes endpoints were rewritten in an idle cluster')
  })

  it('moves the controllers to another server when the holder is killed during namespace deletions, which finish', async () => {
    const first = await holder(anyServer())
    assert.ok(first >= 0, 'no server holds the controllers lease')
    const names = ['doomed-0', 'doomed-1', 'doomed-2', 'doomed-3']
    for (const name of names) {
      await anyServer().ok('create', 'namespace', name)
      for (const cm of ['a', 'b', 'c']) await anyServer().ok('create', 'configmap', cm, '-n', name, '--from-literal=k=v')
    }
    // Half are being deleted when the holder dies, half are deleted after.
    for (const name of names.slice(0, 2)) await anyServer().ok('delete', 'namespace', name, '--wait=false')
    await daemons[first]!.kill()
    for (const name of names.slice(2)) await anyServer().ok('delete', 'namespace', name, '--wait=false')
    await eventually('another server holds the lease', async () => {
      const now = await holder(anyServer())
      return now >= 0 && now !== first
    })
    for (const name of names) {
      await eventually(`namespace ${name} is gone`, async () => (await anyServer().kubectl('get', 'namespace', name)).code !== 0)
    }
    killed = first
  })

  it('goes on reading and writing through every live server with one etcd member killed', async () => {
    assert.ok(etcd)
    // The etcd leader: its loss makes the other two elect one of themselves.
    const lost = await etcd.leader()
    await etcd.members[lost === -1 ? 0 : lost]!.pause('SIGKILL')
    // Until the other two have elected a leader, a write may fail as with upstream (etcd: leader changed).
    await eventually('etcd has a new leader', async () => (await anyServer().kubectl('create', 'configmap', 'after-election', '-n', 'default')).code === 0, 15_000)
    for (let round = 0; round < 3; round++) {
      const servers = live()
      for (const [i, server] of servers.entries()) {
        const name = `quorum-of-two-${round}-${i}`
        await server.ok('create', 'configmap', name, '-n', 'default', `--from-literal=round=${round}`)
        const reader = servers[(i + 1) % servers.length]!
        assert.equal(await reader.ok('get', 'configmap', name, '-n', 'default', '-o', 'jsonpath={.data.round}'), String(round))
      }
    }
  })

  it('drops the killed server from the kubernetes endpoints once its record expires', async () => {
    assert.equal(live().length, 2)
    const remaining = ADDRESSES.filter((_, i) => i !== killed).join(' ')
    await eventually('the endpoints drop the killed server', async () => (await endpointIPs(anyServer())) === remaining)
  })
})
