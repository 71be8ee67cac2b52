/**
 * `--endpoint-reconciler-type=lease`, as upstream's lease endpoint
 * reconciler: every server keeps a short-lived record of its advertised
 * address under `<root>/masterleases/<ip>` (not an API object), renews it
 * every ten seconds, and the `kubernetes` endpoints list the addresses whose
 * record is alive. A server that dies drops out once its record expires; one
 * that shuts down removes its record at once.
 *
 * Upstream's records expire through etcd's key TTL; here the expiry is
 * written into the record and readers skip and delete expired ones, so the
 * rule holds on every backend.
 */
import type { Storage } from '../storage/interface.js'
import { StorageError } from '../storage/interface.js'
import type { KubeObject } from '../machinery/object.js'

const EXPIRES = 'apiserver.internal/expires'

export interface EndpointLeaseTimings {
  /** How long a record lives without renewal. @default 15000 (upstream's) */
  ttlMs: number
  /** How often each server renews its record and reconciles the endpoints. @default 10000 (upstream's) */
  intervalMs: number
}

export const DEFAULT_ENDPOINT_LEASE: EndpointLeaseTimings = { ttlMs: 15_000, intervalMs: 10_000 }

export interface EndpointLeases {
  /** Renews this server's record; the live addresses, this one included, sorted. */
  renew(): Promise<string[]>
  /** Removes this server's record (graceful shutdown). */
  remove(): Promise<void>
}

export function endpointLeases(storage: Storage, root: string, address: string, timings: EndpointLeaseTimings, now: () => Date): EndpointLeases {
  const prefix = `${root}/masterleases/`
  const key = `${prefix}${address}`
  const recordAt = (t: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: address, annotations: { [EXPIRES]: String(t + timings.ttlMs) } },
    subsets: [{ addresses: [{ ip: address }] }],
  })
  const expiry = (obj: KubeObject): number => Number(obj.metadata.annotations?.[EXPIRES] ?? 0)
  const isKnown = (err: unknown, code: string): boolean => err instanceof StorageError && err.code === code
  return {
    async renew() {
      const t = now().getTime()
      await storage.guaranteedUpdate(key, () => recordAt(t)).catch(async (err: unknown) => {
        if (!isKnown(err, 'KeyNotFound')) throw err
        await storage.create(key, recordAt(t)).catch((e: unknown) => {
          if (!isKnown(e, 'KeyExists')) throw e
        })
      })
      const { items } = await storage.list(prefix)
      const live: string[] = []
      for (const item of items) {
        if (expiry(item) > t) live.push(item.metadata.name ?? '')
        else
          await storage
            .delete(`${prefix}${item.metadata.name ?? ''}`, { preconditions: { resourceVersion: item.metadata.resourceVersion ?? '' } })
            .catch(() => {})
      }
      return live.filter((ip) => ip !== '').sort()
    },
    async remove() {
      await storage.delete(key).catch((err: unknown) => {
        if (!isKnown(err, 'KeyNotFound')) throw err
      })
    },
  }
}
