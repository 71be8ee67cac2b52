/**
 * The server's storage as createApiServer assembles it: the backend (the
 * embedder's, or a new in-memory store), the value transformers of
 * encryption at rest, `--event-ttl` on backends that do not expire keys,
 * and the watch cache in front of each resource's backend.
 */
import type { Tracer } from '@opentelemetry/api'
import { apiServerId } from '../controllers/apiserver-identity.js'
import { encryptionKeyTransformers } from '../encryption/resource-transformers.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import { START_INFORMERS } from '../lifecycle/startup-parts.js'
import type { Logger } from '../logging/logger.js'
import { ENCRYPTION_LAST_RELOAD, ENCRYPTION_RELOADS } from '../metrics/definitions.js'
import type { Metrics } from '../metrics/metrics.js'
import { countTerminatedWatcher } from '../metrics/terminated-watchers.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { ServerPorts } from '../ports.js'
import { DEFAULT_STORAGE_PREFIX } from '../registry/store.js'
import { expiringFactory } from '../storage/expiring.js'
import { singleStorage } from '../storage/factory.js'
import type { Storage } from '../storage/interface.js'
import { MemoryStorage } from '../storage/memory.js'
import { ServerStorage } from '../storage/server-storage.js'
import type { KeyTransformers } from '../storage/value/key-transformers.js'

export interface AssembledStorage {
  /** Where the server's revision and health come from. */
  readonly backend: Storage
  /** The in-memory store, when the server made it: snapshots and resets need it. */
  readonly memory: MemoryStorage | undefined
  readonly transformers: KeyTransformers | undefined
  /** Each resource's storage, behind the watch cache. */
  readonly factory: ServerStorage
  /** Where keys start, without a trailing slash. */
  readonly root: string
}

export interface StorageDeps {
  readonly logger: Logger
  readonly now: () => Date
  readonly metrics: Metrics
  readonly tracer: Tracer | undefined
  readonly hooks: ServerHooks
}

export function assembleStorage(options: ApiServerOptions, ports: Partial<ServerPorts>, { logger, now, metrics, tracer, hooks }: StorageDeps): AssembledStorage {
  const transformers = valueTransformers(options, ports)
  const backend = ports.storage ?? new MemoryStorage(transformers ? { transformerFor: (key) => transformers.forKey(key) } : {})
  // Snapshots are the in-memory store's: its data and revision, copied in an instant.
  const memory = !ports.storageFactory && backend instanceof MemoryStorage ? backend : undefined
  if (transformers) recordEncryptionReloads(transformers, metrics, options, now)
  // Which resource each cached prefix holds, to label the watches the cache ends as too slow.
  const cachedResources = new Map<string, { group: string; resource: string }>()
  const onWatcherTerminated = (prefix: string): void => {
    const resource = cachedResources.get(prefix)
    if (resource) countTerminatedWatcher(metrics, resource)
  }
  const root = (options.storagePrefix ?? DEFAULT_STORAGE_PREFIX).replace(/\/+$/, '')
  // --event-ttl on a backend that does not expire keys itself (memory, the embedded store).
  const expiring = options.eventTtlMs
    ? expiringFactory(ports.storageFactory ?? singleStorage(backend), [{ prefix: `${root}/events/`, ttlMs: options.eventTtlMs }], () => now().getTime(), (err) =>
        logger.warn({ err: String(err) }, 'cannot delete an expired event'),
      )
    : undefined
  // Each resource's backend, behind the watch cache unless --watch-cache or its --watch-cache-sizes turns it off.
  const factory = new ServerStorage(expiring ?? ports.storageFactory ?? singleStorage(backend), {
    watchCache: options.watchCache ?? true,
    watchCacheSizes: options.watchCacheSizes ?? {},
    cacheOptions: {
      logger,
      onWatcherTerminated,
      ...(options.watcherBufferSize ? { watcherBufferSize: options.watcherBufferSize } : {}),
      // In memory, a resource's cache loads when first used: a test reads a few of the sixty resources, and
      // the store answers a late cache's watch from its history at once. Other stores' caches load at start, as upstream's.
      startOnFirstUse: backend instanceof MemoryStorage && !ports.storageFactory,
    },
    onCached: ({ group, resource, prefix }) => cachedResources.set(prefix, { group, resource }),
    metrics,
    ...(tracer ? { tracer } : {}),
    ...(transformers ? { transformers } : {}),
  })
  // The watch caches load with the rest of start-up (those in memory with their first use), so that reads at resourceVersion 0 are answered from memory from the start.
  hooks.onStart('load', START_INFORMERS, () => factory.loaded())
  // The cache's storage watches end with the server; the storage itself stays open for its owner.
  hooks.onShutdown(() => factory.stop(), 'storage')
  if (expiring) hooks.onShutdown(() => expiring.stop(), 'storage')
  return { backend, memory, transformers, factory, root }
}

/**
 * The transformers the backends store through: the embedder's, or built from
 * `options.encryption` for the in-memory store. A storage given without them
 * would ignore the configuration, so that is refused (fail closed).
 */
function valueTransformers(options: ApiServerOptions, ports: Partial<ServerPorts>): KeyTransformers | undefined {
  if (ports.valueTransformers) return ports.valueTransformers
  if (!options.encryption) return undefined
  if (ports.storage || ports.storageFactory) {
    throw new Error('options.encryption needs ports.valueTransformers built from it: the given storage would store values unencrypted')
  }
  return encryptionKeyTransformers(options.encryption, ports.kmsClients ? { kms: ports.kmsClients } : {})
}

/**
 * `--encryption-provider-config-automatic-reload` in /metrics as upstream
 * counts it: per outcome, labelled with a hash of the server's id.
 */
function recordEncryptionReloads(transformers: KeyTransformers, metrics: Metrics, options: ApiServerOptions, now: () => Date): void {
  const idHash = (async () => {
    const id = await apiServerId(options.multiServer?.hostname ?? 'localhost', options.advertiseAddress ?? '127.0.0.1', options.securePort, options.multiServer?.instance)
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(id)))
    return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}`
  })()
  transformers.onReload((ok) => {
    const status = ok ? 'success' : 'failure'
    const at = now().getTime() / 1000
    void idHash.then((apiserver_id_hash) => {
      metrics.addCounter(ENCRYPTION_RELOADS.name, ENCRYPTION_RELOADS.help, { apiserver_id_hash, status })
      metrics.setGauge(ENCRYPTION_LAST_RELOAD.name, ENCRYPTION_LAST_RELOAD.help, { apiserver_id_hash, status }, at)
    })
  })
}
