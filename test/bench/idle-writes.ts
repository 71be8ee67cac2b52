/**
 * What an idle cluster writes, key by key: three daemons on a three-member
 * etcd with default flags, then the same with the peer proxy on, each left
 * alone for a minute while a watch on etcd counts every put and delete by
 * key. Counts, not timings: the machine's load does not change them, so
 * they can be compared with the renewal schedules docs/operations.md gives ("Several servers").
 *
 * Run alone with `npm run build && node --import tsx test/bench/idle-writes.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { Daemon, freePort } from '../e2e/daemon.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3']
const IDLE_SECONDS = 60
/** Left alone this long first, so that start-up's own writes are over. */
const SETTLE_SECONDS = 15

interface IdleWrites {
  seconds: number
  /** Writes by kind of key (the key with each server's name or address replaced by a placeholder). */
  byKind: Map<string, number>
  total: number
}

/** The key with what differs from server to server put in words, so the three servers' records count together. */
function kindOf(key: string): string {
  return key
    .replace(/\/leases\/kube-system\/apiserver-[a-z0-9]+$/, '/leases/kube-system/apiserver-<id> (identity leases)')
    .replace(/\/masterleases\/[\d.]+$/, '/masterleases/<address> (endpoint records)')
    .replace(/\/peerserverleases\/apiserver-[a-z0-9]+$/, '/peerserverleases/apiserver-<id> (peer proxy records)')
}

/** The peer proxy's flags (one CA for the peers' serving certificates, a front-proxy client certificate), in `dir`. */
async function peerProxyFlags(dir: string): Promise<string[]> {
  const ca = await createCertificateAuthority({ commonName: 'idle-writes-ca' })
  const frontProxyCa = await createCertificateAuthority({ commonName: 'idle-writes-front-proxy-ca' })
  const client = await issueClientCertificate(frontProxyCa, { commonName: 'front-proxy-client', organizations: [] })
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text, { mode: 0o600 })
    return join(dir, name)
  }
  return [
    '--feature-gates=UnknownVersionInteroperabilityProxy=true',
    `--peer-ca-file=${file('ca.crt', ca.certificate)}`,
    `--proxy-client-cert-file=${file('proxy.crt', client.certificate)}`,
    `--proxy-client-key-file=${file('proxy.key', client.privateKey)}`,
    `--requestheader-client-ca-file=${file('front-proxy-ca.crt', frontProxyCa.certificate)}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
  ]
}

async function measureIdleWrites(extraFlags: string[]): Promise<IdleWrites> {
  const etcd = await EtcdServer.startCluster(3)
  const daemons: Daemon[] = []
  try {
    const port = await freePort()
    const urls = etcd.clientUrls
    for (const [i, address] of ADDRESSES.entries()) {
      const servers = [...urls.slice(i), ...urls.slice(0, i)].join(',')
      daemons.push(await Daemon.start([`--etcd-servers=${servers}`, ...extraFlags], { port, bindAddress: address }))
    }
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000))
    const client = etcd.members[0]!.client()
    const byKind = new Map<string, number>()
    const count = (key: string) => byKind.set(kindOf(key), (byKind.get(kindOf(key)) ?? 0) + 1)
    const watcher = await client.watch().prefix('/').create()
    watcher.on('put', (kv) => count(kv.key.toString()))
    watcher.on('delete', (kv) => count(`deleted ${kv.key.toString()}`))
    const t0 = Date.now()
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000))
    await watcher.cancel()
    client.close()
    const total = [...byKind.values()].reduce((a, b) => a + b, 0)
    return { seconds: (Date.now() - t0) / 1000, byKind, total }
  } finally {
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd.destroy()
  }
}

const BEGIN = '<!-- idle-writes: begin -->'
const END = '<!-- idle-writes: end -->'

function renderIdleWritesSection(plain: IdleWrites, withPeers: IdleWrites, date: Date): string {
  const kinds = [...new Set([...plain.byKind.keys(), ...withPeers.byKind.keys()])].sort()
  const rows = kinds.map((k) => `| \`${k}\` | ${plain.byKind.get(k) ?? 0} | ${withPeers.byKind.get(k) ?? 0} |`).join('\n')
  return `${BEGIN}
## What an idle cluster writes, by key

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/idle-writes.ts\` (after \`npm run build\`).

Three daemons on a three-member etcd, default flags, each given every member;
after ${SETTLE_SECONDS} s to settle, a watch on etcd counts every write for
${IDLE_SECONDS} s with no client. Expected, from the schedules in docs/operations.md: the
controllers' lease every 2 s retry period (30 a minute), each server's
identity lease and endpoint record every 10 s (18 a minute of each kind for
three servers), and with the peer proxy each server's peer record every 10 s
(18 more). Nothing else: the \`kubernetes\` endpoints are not rewritten.

| key | writes in ${Math.round(plain.seconds)} s, default flags | writes in ${Math.round(withPeers.seconds)} s, peer proxy on |
| --- | --- | --- |
${rows}
| **all** | **${plain.total}** | **${withPeers.total}** |
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const plain = await measureIdleWrites([])
  const withPeers = await measureIdleWrites(await peerProxyFlags(mkdtempSync(join(tmpdir(), 'idle-writes-'))))
  const section = renderIdleWritesSection(plain, withPeers, new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
