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
  const prefix = `${root}/peerserverleases/`
  const key = `${prefix}${serverId}`
  const address = splitHostPort(hostPort)
  if (!address) throw new Error(`the peer address ${hostPort} is not host:port`)
  const record = (t: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: serverId, annotations: { [EXPIRES]: String(t + timings.ttlMs) } },
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
          // A server that is gone: its record is removed unless renewed meanwhile (etcd's TTL upstream).
          const rv = item.metadata.resourceVersion ?? ''
          await storage.delete(`${prefix}${item.metadata.name ?? ''}`, { preconditions: { resourceVersion: rv } }).catch(() => {})
          continue
        }
        const subset = (item['subsets'] as { addresses?: { ip?: string }[]; ports?: { port?: number }[] }[] | undefined)?.[0]
        const ip = subset?.addresses?.[0]?.ip
        const port = subset?.ports?.[0]?.port
        if (item.metadata.name && ip && port) out.set(item.metadata.name, joinHostPort(ip, port))
      }
      return out
    },
  }
}
