/**
 * Keys that expire (`--event-ttl`) on a backend without a TTL of its own
 * (the embedded store, memory): a decorator that notes when each key under
 * an expiring prefix was last written and deletes it once its time to live
 * has passed, so that watchers see a DELETED event as etcd's lease expiry
 * gives them. The deletion names the revision it saw: a key written again
 * meanwhile lives on. Keys found at start (written before a restart) get a
 * full time to live from then.
 */
import type { StorageFactory, StorageResource } from './factory.js'
import type { Storage } from './interface.js'
import { StorageError } from './interface.js'

export interface ExpiringPrefix {
  /** Where the expiring keys start, ending in `/` (`/registry/events/`). */
  prefix: string
  ttlMs: number
}

interface Expiry {
  at: number
  revision: string
}

export interface ExpiringStorageFactory extends StorageFactory {
  stop(): void
}

/** How often expired keys are looked for: a tenth of the shortest time to live, between 100ms and 10s. */
function sweepInterval(prefixes: readonly ExpiringPrefix[]): number {
  const shortest = Math.min(...prefixes.map((p) => p.ttlMs))
  return Math.min(10_000, Math.max(100, Math.floor(shortest / 10)))
}

function expiringStorage(backend: Storage, rule: ExpiringPrefix, clock: () => number, onError: (err: unknown) => void): { storage: Storage; stop(): void } {
  const expiries = new Map<string, Expiry>()
  const note = (key: string, revision: string | undefined): void => {
    if (revision) expiries.set(key, { at: clock() + rule.ttlMs, revision })
  }
  const under = (key: string): boolean => key.startsWith(rule.prefix)
  // What was stored before this process started expires a full time to live from now.
  const loaded = backend
    .list(rule.prefix)
    .then(({ items }) => {
      for (const item of items) {
        const key = `${rule.prefix}${item.metadata.namespace ? `${item.metadata.namespace}/` : ''}${item.metadata.name ?? ''}`
        if (!expiries.has(key)) note(key, item.metadata.resourceVersion)
      }
    })
    .catch(onError)
  const sweep = async (): Promise<void> => {
    await loaded
    const t = clock()
    for (const [key, expiry] of expiries) {
      if (expiry.at > t) continue
      expiries.delete(key)
      await backend.delete(key, { preconditions: { resourceVersion: expiry.revision } }).catch((err: unknown) => {
        // Gone already, or written since (that write noted its own expiry).
        if (err instanceof StorageError && ['KeyNotFound', 'ResourceVersionConflict', 'PreconditionFailed'].includes(err.code)) return
        onError(err)
      })
    }
  }
  let sweeping = false
  const timer = setInterval(() => {
    if (sweeping) return
    sweeping = true
    void sweep().finally(() => (sweeping = false))
  }, sweepInterval([rule]))
  const storage: Storage = {
    create: async (key, obj) => {
      const created = await backend.create(key, obj)
      if (under(key)) note(key, created.metadata.resourceVersion)
      return created
    },
    guaranteedUpdate: async (key, tryUpdate, opts) => {
      const updated = await backend.guaranteedUpdate(key, tryUpdate, opts)
      if (under(key)) note(key, updated.metadata.resourceVersion)
      return updated
    },
    delete: async (key, opts) => {
      const deleted = await backend.delete(key, opts)
      expiries.delete(key)
      return deleted
    },
    get: (key, opts) => backend.get(key, opts),
    list: (prefix, opts) => backend.list(prefix, opts),
    watch: (prefix, opts) => backend.watch(prefix, opts),
    count: (prefix) => backend.count(prefix),
    currentRevision: () => backend.currentRevision(),
    close: () => backend.close(),
  }
  return { storage, stop: () => clearInterval(timer) }
}

/** `factory` with the resources under `prefixes` expiring; other resources pass through untouched. */
export function expiringFactory(
  factory: StorageFactory,
  prefixes: readonly ExpiringPrefix[],
  clock: () => number,
  onError: (err: unknown) => void,
): ExpiringStorageFactory {
  const stops: (() => void)[] = []
  return {
    storageFor(resource: StorageResource): Storage {
      const backend = factory.storageFor(resource)
      const rule = prefixes.find((p) => resource.prefix === p.prefix)
      if (!rule) return backend
      const wrapped = expiringStorage(backend, rule, clock, onError)
      stops.push(wrapped.stop)
      return wrapped.storage
    },
    stop: () => stops.forEach((stop) => stop()),
  }
}
