/**
 * What each live peer serves (upstream's peer discovery cache): every
 * server reads its peers' aggregated discovery (`/api` and `/apis`) over
 * the peer transport as `system:apiserver` when a peer appears, starts
 * again or moves (as upstream does on its peers' identity lease events;
 * nothing is polled), and keeps the group/version/resources of each. A
 * peer that cannot be read keeps what was last read of it until its
 * endpoint record goes.
 */
import { AGGREGATED_DISCOVERY_TYPE } from '../http/media-types.js'
import type { Logger } from '../logging/logger.js'
import type { UserInfo } from '../machinery/object.js'
import type { PeerRecordHandler } from './peer-follower.js'
import type { PeerForward } from './peer-transport.js'

/** Who asks a peer for its discovery (upstream's). */
const APISERVER_USER: UserInfo = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:authenticated'] }

export interface PeerDirectory {
  /** `host:port` of the live peers (never this server) that serve the resource. */
  serving(group: string, version: string, resource: string): string[]
}

/** How a discovery read that failed is tried again (upstream's rate-limited queue, in short). */
export interface DiscoveryRetry {
  /** @default 200 */
  firstDelayMs: number
  /** @default 30000 */
  maxDelayMs: number
  /** Tries in all before giving up on a peer until its record changes. @default 20 (upstream's) */
  attempts: number
}

export const DEFAULT_DISCOVERY_RETRY: DiscoveryRetry = { firstDelayMs: 200, maxDelayMs: 30_000, attempts: 20 }

/** The directory, fed by the peer endpoint records as they change. */
export interface FollowingPeerDirectory extends PeerDirectory, PeerRecordHandler {
  stop(): void
}

interface DiscoveryList {
  items?: { metadata?: { name?: string }; versions?: { version?: string; resources?: { resource?: string }[] }[] }[]
}

const gvrKey = (group: string, version: string, resource: string) => `${group}/${version}/${resource}`

async function readDiscovery(forward: PeerForward, hostPort: string): Promise<Set<string>> {
  const served = new Set<string>()
  for (const path of ['/api', '/apis']) {
    const response = await forward(hostPort, { method: 'GET', path, headers: new Headers({ accept: AGGREGATED_DISCOVERY_TYPE }), body: null }, APISERVER_USER)
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {})
      throw new Error(`discovery ${path} answered ${response.status}`)
    }
    const list = (await response.json()) as DiscoveryList
    for (const group of list.items ?? []) {
      for (const version of group.versions ?? []) {
        for (const r of version.resources ?? []) served.add(gvrKey(group.metadata?.name ?? '', version.version ?? '', r.resource ?? ''))
      }
    }
  }
  return served
}

interface KnownPeer {
  hostPort: string
  run: string
  /** What it serves; empty until its discovery was read. */
  served: Set<string>
  /** A read in flight or waiting to be retried; bumped when the peer changes, so a stale read is dropped. */
  generation: number
  retry?: ReturnType<typeof setTimeout>
}

/**
 * A new peer (or one that started again, or moved) has its discovery read
 * at once; a read that fails is retried with a growing pause, keeping what
 * was read of it before; a peer whose record is gone is forgotten at once.
 */
export function peerDirectory(selfId: string, forward: PeerForward, logger: Logger, retry: DiscoveryRetry = DEFAULT_DISCOVERY_RETRY): FollowingPeerDirectory {
  const peers = new Map<string, KnownPeer>()
  const read = (id: string, peer: KnownPeer, attempt: number) => {
    const generation = peer.generation
    readDiscovery(forward, peer.hostPort).then(
      (served) => {
        if (peers.get(id) === peer && peer.generation === generation) peer.served = served
      },
      (err: unknown) => {
        if (peers.get(id) !== peer || peer.generation !== generation) return
        logger.warn({ peer: id, address: peer.hostPort, attempt, err: String(err) }, 'cannot read the discovery of a peer server')
        if (attempt >= retry.attempts) return
        const delay = Math.min(retry.maxDelayMs, retry.firstDelayMs * 2 ** (attempt - 1))
        peer.retry = setTimeout(() => read(id, peer, attempt + 1), delay)
      },
    )
  }
  return {
    serving(group, version, resource) {
      const key = gvrKey(group, version, resource)
      return [...peers.values()].filter((p) => p.served.has(key)).map((p) => p.hostPort)
    },
    seen(record) {
      if (record.id === selfId) return
      const known = peers.get(record.id)
      // A renewal: nothing changed that discovery depends on.
      if (known && known.hostPort === record.hostPort && known.run === record.run) return
      const peer: KnownPeer = known ?? { hostPort: record.hostPort, run: record.run, served: new Set(), generation: 0 }
      clearTimeout(peer.retry)
      peer.hostPort = record.hostPort
      peer.run = record.run
      peer.generation++
      peers.set(record.id, peer)
      read(record.id, peer, 1)
    },
    gone(id) {
      clearTimeout(peers.get(id)?.retry)
      peers.delete(id)
    },
    stop() {
      for (const peer of peers.values()) clearTimeout(peer.retry)
      peers.clear()
    },
  }
}
