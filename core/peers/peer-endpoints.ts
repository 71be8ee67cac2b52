/**
 * Where each server's peers reach it (upstream's peer endpoint lease
 * reconciler): a short-lived record `<root>/peerserverleases/<server id>`
 * with the address from `--peer-advertise-ip` and `--peer-advertise-port`
 * (else the advertised address and secure port), renewed every ten
 * seconds, gone fifteen seconds after the server stops renewing it. Not an
 * API object. As with the `kubernetes` endpoint records, the expiry is
 * written into the record, so the rule holds on every backend.
 */
import type { KubeObject } from '../machinery/object.js'
import { StorageError, type Storage } from '../storage/interface.js'

const EXPIRES = 'apiserver.internal/expires'
/** Changes each time the server starts, so that peers read again what a restarted server serves. */
const RUN = 'apiserver.internal/run'

/** Where the records live under the storage root. */
export const peerEndpointsPrefix = (root: string): string => `${root}/peerserverleases/`

/** One server's record, read. */
export interface PeerRecord {
  id: string
  hostPort: string
  /** Which start of that server wrote it. */
  run: string
  /** Milliseconds since the epoch. */
  expiresAt: number
}

/** The record in a stored object, or undefined when it is not one. */
export function readPeerRecord(item: KubeObject): PeerRecord | undefined {
  const subset = (item['subsets'] as { addresses?: { ip?: string }[]; ports?: { port?: number }[] }[] | undefined)?.[0]
  const ip = subset?.addresses?.[0]?.ip
  const port = subset?.ports?.[0]?.port
  const id = item.metadata.name
  if (!id || !ip || !port) return undefined
  const annotations = item.metadata.annotations ?? {}
  return { id, hostPort: joinHostPort(ip, port), run: annotations[RUN] ?? '', expiresAt: Number(annotations[EXPIRES] ?? 0) }
}

export interface PeerEndpointTimings {
  /** @default 15000 (upstream's) */
  ttlMs: number
  /** @default 10000 (upstream's) */
  intervalMs: number
}

export const DEFAULT_PEER_ENDPOINT: PeerEndpointTimings = { ttlMs: 15_000, intervalMs: 10_000 }

export interface PeerEndpoints {
  /** Writes this server's record with a fresh expiry. */
  renew(): Promise<void>
  /** Removes this server's record (graceful shutdown). */
  remove(): Promise<void>
  /** The live servers' `host:port` by server id, this one included. */
  live(): Promise<Map<string, string>>
}

/** `host:port`, with brackets around an IPv6 host. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

function splitHostPort(hostPort: string): { ip: string; port: number } | undefined {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(hostPort)
  return m ? { ip: m[1] ?? '', port: Number(m[2]) } : undefined
}

export function peerEndpoints(storage: Storage, root: string, serverId: string, hostPort: string, timings: PeerEndpointTimings, now: () => Date): PeerEndpoints {
  const prefix = peerEndpointsPrefix(root)
  const key = `${prefix}${serverId}`
  const address = splitHostPort(hostPort)
  if (!address) throw new Error(`the peer address ${hostPort} is not host:port`)
  const run = crypto.randomUUID()
  const record = (t: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: serverId, annotations: { [EXPIRES]: String(t + timings.ttlMs), [RUN]: run } },
    subsets: [{ addresses: [{ ip: address.ip }], ports: [{ port: address.port, protocol: 'TCP' }] }],
  })
  const isCode = (err: unknown, code: string): boolean => err instanceof StorageError && err.code === code
  return {
    async renew() {
      const t = now().getTime()
      await storage.guaranteedUpdate(key, () => record(t)).catch(async (err: unknown) => {
        if (!isCode(err, 'KeyNotFound')) throw err
        await storage.create(key, record(t)).catch((e: unknown) => {
          if (!isCode(e, 'KeyExists')) throw e
        })
      })
    },
    async remove() {
      await storage.delete(key).catch((err: unknown) => {
        if (!isCode(err, 'KeyNotFound')) throw err
      })
    },
    async live() {
      const t = now().getTime()
      const { items } = await storage.list(prefix)
      const out = new Map<string, string>()
      for (const item of items) {
        if (Number(item.metadata.annotations?.[EXPIRES] ?? 0) <= t) {
          await removeExpiredRecord(storage, root, item)
          continue
        }
        const found = readPeerRecord(item)
        if (found) out.set(found.id, found.hostPort)
      }
      return out
    },
  }
}

/** A server that is gone: its record is removed unless renewed meanwhile (etcd's TTL upstream). */
export async function removeExpiredRecord(storage: Storage, root: string, item: KubeObject): Promise<void> {
  const rv = item.metadata.resourceVersion ?? ''
  await storage.delete(`${peerEndpointsPrefix(root)}${item.metadata.name ?? ''}`, { preconditions: { resourceVersion: rv } }).catch(() => {})
}
