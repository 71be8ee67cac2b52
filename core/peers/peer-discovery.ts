/**
 * What each live peer serves (upstream's peer discovery cache): every
 * server reads its peers' aggregated discovery (`/api` and `/apis`) over
 * the peer transport as `system:apiserver`, at start and then every
 * interval, and keeps the group/version/resources of each. A peer that
 * cannot be read keeps what was last read of it until its endpoint record
 * expires.
 */
import { AGGREGATED_DISCOVERY_TYPE } from '../http/media-types.js'
import type { Logger } from '../ports.js'
import type { UserInfo } from '../machinery/object.js'
import type { PeerEndpoints } from './peer-endpoints.js'
import type { PeerForward } from './peer-transport.js'

/** Who asks a peer for its discovery (upstream's). */
const APISERVER_USER: UserInfo = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:authenticated'] }

export interface PeerDirectory {
  /** `host:port` of the live peers (never this server) that serve the resource. */
  serving(group: string, version: string, resource: string): string[]
  /** Reads the live peers' discovery again. */
  refresh(): Promise<void>
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

export function peerDirectory(selfId: string, endpoints: PeerEndpoints, forward: PeerForward, logger: Logger): PeerDirectory {
  let peers = new Map<string, { hostPort: string; served: Set<string> }>()
  return {
    serving(group, version, resource) {
      const key = gvrKey(group, version, resource)
      return [...peers.values()].filter((p) => p.served.has(key)).map((p) => p.hostPort)
    },
    async refresh() {
      const live = await endpoints.live()
      const next = new Map<string, { hostPort: string; served: Set<string> }>()
      await Promise.all(
        [...live].map(async ([id, hostPort]) => {
          if (id === selfId) return
          try {
            next.set(id, { hostPort, served: await readDiscovery(forward, hostPort) })
          } catch (err) {
            const known = peers.get(id)
            if (known) next.set(id, { ...known, hostPort })
            logger.warn({ peer: id, address: hostPort, err: String(err) }, 'cannot read the discovery of a peer server')
          }
        }),
      )
      peers = next
    },
  }
}
