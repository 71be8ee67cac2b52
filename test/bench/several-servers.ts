/**
 * Several daemons on one etcd against one: GET and create rates from a
 * keep-alive HTTPS client spread round-robin over the servers, and the
 * writes per minute of an idle cluster of three (the lease renewals, read
 * as the growth of etcd's revision). Then three daemons on a three-member
 * etcd: the same rates, and creates while one etcd member is killed (a
 * follower, then, with the follower back, the leader), with the failures
 * the client saw. All processes share this machine's
 * cores, so the figures show what a second and third server cost here, not
 * what separate machines would give. Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/several-servers.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { Daemon, freePort } from '../e2e/daemon.js'
import { type EtcdCluster, EtcdServer } from '../storage-contract/etcd-server.js'
import { join } from 'node:path'
import { type Client, clientOf } from './daemon-client.js'
import { ms } from './format.js'
import { type LoadResult, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3']
const GETS = { total: 4000, concurrency: 16, maxSeconds: 15 }
const CREATES = { total: 1500, concurrency: 16, maxSeconds: 15 }
const IDLE_SECONDS = 60
/** Creates spread over three servers while an etcd member is killed this far into them. */
const LOSS = { total: 100_000, concurrency: 16, maxSeconds: 8 }
const LOSS_AFTER_MS = 2000

interface ClusterFigures {
  servers: number
  gets: LoadResult
  creates: LoadResult
}

async function measure(clients: Client[], tag: string): Promise<ClusterFigures> {
  const first = clients[0]!
  await first.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `read-${tag}` }, data: { a: 'b' } })
  const pick = (i: number) => clients[i % clients.length]!
  const gets = await runLoad(GETS, async (i) => (await pick(i).call('GET', `/api/v1/namespaces/default/configmaps/read-${tag}`)).status === 200)
  const creates = await runLoad(
    CREATES,
    async (i) => (await pick(i).call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `w-${tag}-${i}` }, data: { i: String(i) } })).status === 201,
  )
  return { servers: clients.length, gets, creates }
}

async function revision(client: Client): Promise<number> {
  return Number(JSON.parse((await client.call('GET', '/api/v1/namespaces?limit=1')).text).metadata.resourceVersion)
}

interface Figures {
  one: ClusterFigures
  three: ClusterFigures
  idleWritesPerMinute: number
  /** Three servers on a three-member etcd. */
  onCluster: ClusterFigures
  followerLost: LoadResult
  leaderLost: LoadResult
}

/** Starts three daemons given every member of `etcd`, on one port. */
async function startThree(urls: string[], daemons: Daemon[], clients: Client[]): Promise<void> {
  const port = await freePort()
  for (const address of ADDRESSES) {
    const d = await Daemon.start([`--etcd-servers=${urls.join(',')}`], { port, bindAddress: address })
    daemons.push(d)
    clients.push(clientOf(d, address))
  }
}

/** Creates spread over the servers, with `lose` run LOSS_AFTER_MS into them. */
async function createsWhile(clients: Client[], tag: string, lose: () => Promise<void>): Promise<LoadResult> {
  const losing = new Promise((r) => setTimeout(r, LOSS_AFTER_MS)).then(lose)
  const result = await runLoad(
    LOSS,
    async (i) => (await clients[i % clients.length]!.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `${tag}-${i}` } })).status === 201,
  )
  await losing
  return result
}

async function measureOnCluster(): Promise<Pick<Figures, 'onCluster' | 'followerLost' | 'leaderLost'>> {
  let etcd: EtcdCluster | undefined
  const daemons: Daemon[] = []
  const clients: Client[] = []
  try {
    etcd = await EtcdServer.startCluster(3)
    const cluster = etcd
    await startThree(cluster.clientUrls, daemons, clients)
    await new Promise((r) => setTimeout(r, 5000))
    const onCluster = await measure(clients, 'cluster')
    const member = async (which: 'leader' | 'follower') => {
      const leader = await cluster.leader()
      return cluster.members[which === 'leader' ? leader : (leader + 1) % cluster.members.length]!
    }
    const follower = await member('follower')
    const followerLost = await createsWhile(clients, 'follower-lost', () => follower.pause('SIGKILL'))
    await follower.resume()
    // Let the member catch up and the servers' circuits to it close again.
    await new Promise((r) => setTimeout(r, 5000))
    const leader = await member('leader')
    const leaderLost = await createsWhile(clients, 'leader-lost', () => leader.pause('SIGKILL'))
    return { onCluster, followerLost, leaderLost }
  } finally {
    for (const c of clients) c.close()
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd?.destroy()
  }
}

export async function measureSeveralServers(): Promise<Figures> {
  const etcd = await EtcdServer.start()
  const daemons: Daemon[] = []
  const clients: Client[] = []
  try {
    const port = await freePort()
    const start = async (address: string) => {
      const d = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`], { port, bindAddress: address })
      daemons.push(d)
      clients.push(clientOf(d, address))
    }
    await start(ADDRESSES[0]!)
    const one = await measure(clients, 'one')
    for (const address of ADDRESSES.slice(1)) await start(address)
    // Let the newcomers' first renewals and the endpoints settle before measuring.
    await new Promise((r) => setTimeout(r, 5000))
    const three = await measure(clients, 'three')
    await new Promise((r) => setTimeout(r, 5000))
    const before = await revision(clients[0]!)
    const t0 = Date.now()
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000))
    const writes = (await revision(clients[0]!)) - before
    const idleWritesPerMinute = (writes / ((Date.now() - t0) / 1000)) * 60
    for (const c of clients.splice(0)) c.close()
    await Promise.all(daemons.splice(0).map((d) => d.stop()))
    return { one, three, idleWritesPerMinute, ...(await measureOnCluster()) }
  } finally {
    for (const c of clients) c.close()
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd.destroy()
  }
}

const BEGIN = '<!-- several-servers: begin -->'
const END = '<!-- several-servers: end -->'

export function renderSeveralServersSection(f: Figures, date: Date): string {
  const perSecond = (r: LoadResult) => `${Math.round(r.perSecond).toLocaleString('en-US')}/s${r.errors ? `, ${r.errors} errors` : ''}`
  const figures = (r: LoadResult) => `${perSecond(r)} (p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)})`
  const row = (what: string, one: LoadResult, three: LoadResult, cluster: LoadResult) =>
    `| ${what} | ${figures(one)} | ${figures(three)} | ${(three.perSecond / one.perSecond).toFixed(2)}× | ${figures(cluster)} |`
  const lossRow = (what: string, r: LoadResult) => `| ${what} | ${r.count} in ${r.seconds.toFixed(1)} s (${Math.round(r.perSecond)}/s, p99 ${ms(r.p99Ms)}) | ${r.errors} |`
  return `${BEGIN}
## Several servers on one etcd

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/several-servers.ts\` (after \`npm run build\`).

One etcd member and the daemon (\`--etcd-servers\`, default flags), first
alone, then with two more on 127.0.0.2 and 127.0.0.3 and the same port; the
client spreads its requests round-robin over the servers, ${GETS.concurrency} in flight,
over keep-alive HTTPS as the admin. Every process shares this machine's
cores, so three servers cannot go faster here than the cores allow: the
table shows what the extra servers cost on one machine; on separate
machines reads spread over the servers' own cores, and writes are bound by
etcd either way.

| Requests | one server | three servers | three / one | three servers, three-member etcd |
| --- | --- | --- | --- | --- |
${row('GET one ConfigMap', f.one.gets, f.three.gets, f.onCluster.gets)}
${row('create a ConfigMap', f.one.creates, f.three.creates, f.onCluster.creates)}

The last column: three members (\`EtcdServer.startCluster\`, heartbeat 100 ms,
election timeout 1 s) on the same machine, every server given all three
(\`--etcd-servers\`). An etcd member killed with SIGKILL ${LOSS_AFTER_MS / 1000} s into ${LOSS.maxSeconds} s of creates spread over
the three servers (the follower is started again before the leader is
killed). A call that cannot reach a member goes to the next one; the
creates that fail are those the kill caught: in flight to the killed member
(a write that may have reached etcd is not sent again, as etcd's Go client
does not), and for the leader also those made before the other two elected
a new one. After that none fails (test/e2e/several-servers.test.ts checks
it through every server):

| etcd member killed | creates | failed |
| --- | --- | --- |
${lossRow('a follower', f.followerLost)}
${lossRow('the leader', f.leaderLost)}

Idle cluster of three, default timings, ${IDLE_SECONDS} s without a client: **${Math.round(f.idleWritesPerMinute)} writes a minute**
(etcd revisions; expected 66: the controllers' lease renewed every 2 s
retry period, 30, and each server's identity lease and endpoint record
every 10 s, 36; the \`kubernetes\` endpoints are not rewritten. The peer
proxy adds a record per server every 10 s, 18 more; coordinated leader
election adds a LeaseCandidate per server every 15 s, 12 more).
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureSeveralServers()
  const section = renderSeveralServersSection(figures, new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
