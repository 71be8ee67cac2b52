/**
 * The storage factory createApiServer builds over the runtime's backends:
 * each resource's backend (the runtime's factory decides: one store, or
 * another etcd for an override), behind a watch cache unless
 * `--watch-cache` or the resource's `--watch-cache-sizes` turns it off.
 * One watch cache per backend, each caching the prefixes of its resources.
 */
import type { Tracer } from '@opentelemetry/api'
import type { StorageFactory, StorageResource } from './factory.js'
import type { Storage } from './interface.js'
import { tracedStorage } from './traced-storage.js'
import { measuredStorage } from './measured-storage.js'
import type { Metrics } from '../metrics/metrics.js'
import type { KeyTransformers } from './value/key-transformers.js'
import { WatchCache, type WatchCacheOptions } from './watch-cache.js'
import type { ObjectObserver } from './cacher.js'
import { watchCacheEnabled } from './watch-cache-sizes.js'

export interface ServerStorageOptions {
  /** `--watch-cache`. */
  watchCache: boolean
  /** `--watch-cache-sizes`: 0 turns a resource's cache off. */
  watchCacheSizes: Readonly<Record<string, number>>
  cacheOptions: WatchCacheOptions
  /** Told of each resource the cache holds, with its prefix (to label the watches the cache ends). */
  onCached?: (resource: StorageResource) => void
  /** Where the storage calls are counted and timed (etcd_request_*); none: not measured. */
  metrics?: Metrics
  /** Spans around each request's writes (`--tracing-config-file`); none without. */
  tracer?: Tracer
  /** Told which resource each prefix holds, so the backends store its keys through its transformer. */
  transformers?: KeyTransformers
}

/** Tells an observer of every stored object, present and to come, until the function returned is called; undefined when it cannot see them all. */
export type ObserveStoredObjects = (observer: ObjectObserver) => (() => void) | undefined

export class ServerStorage implements StorageFactory {
  private readonly caches = new Map<Storage, WatchCache>()
  /** Shared with every watch cache, present and future (`observeObjects`). */
  private readonly observers = new Set<ObjectObserver>()
  /** The first resource asked for under each prefix, with its storage (events of two groups share one prefix). */
  private readonly byPrefix = new Map<string, { resource: StorageResource; storage: Storage }>()

  constructor(
    private readonly backends: StorageFactory,
    private readonly options: ServerStorageOptions,
  ) {}

  storageFor(resource: StorageResource): Storage {
    this.options.transformers?.register(resource)
    const cached = this.cachedStorageFor(resource)
    const measured = this.options.metrics ? measuredStorage(cached, resource, this.options.metrics) : cached
    const storage = this.options.tracer ? tracedStorage(measured, resource, this.options.tracer) : measured
    if (!this.byPrefix.has(resource.prefix)) this.byPrefix.set(resource.prefix, { resource, storage })
    return storage
  }

  /** Every stored resource asked for so far (custom ones too), once per key prefix, with the storage that holds it. */
  storedResources(): { resource: StorageResource; storage: Storage }[] {
    return [...this.byPrefix.values()]
  }

  private cachedStorageFor(resource: StorageResource): Storage {
    const backend = this.backends.storageFor(resource)
    if (!this.options.watchCache || !watchCacheEnabled(this.options.watchCacheSizes, resource.group, resource.resource)) return backend
    let cache = this.caches.get(backend)
    if (!cache) {
      cache = new WatchCache(backend, { ...this.options.cacheOptions, observers: this.observers })
      this.caches.set(backend, cache)
    }
    cache.cacheResource(resource.prefix)
    this.options.onCached?.(resource)
    return cache
  }

  /**
   * Tells `observer` of every object the watch caches hold, and of every
   * object a change puts in them from now on (deletions aside), whoever
   * wrote it, until the function returned is called; a resource's cache
   * that loads again tells its objects again. Undefined when some resource
   * may be stored without a cache (`--watch-cache=false`, or a size of 0 in
   * `--watch-cache-sizes`): its objects would go unseen.
   */
  observeObjects(observer: ObjectObserver): (() => void) | undefined {
    if (!this.options.watchCache || Object.values(this.options.watchCacheSizes).includes(0)) return undefined
    this.observers.add(observer)
    for (const cache of this.caches.values()) cache.tellHeld(observer)
    return () => this.observers.delete(observer)
  }

  /** Resolves once every cached resource has loaded. */
  async loaded(): Promise<void> {
    await Promise.all([...this.caches.values()].map((c) => c.loaded()))
  }

  /** Resolves once every cache holds its backend's state as of the call (after a restore of the store behind them). */
  async caughtUp(): Promise<void> {
    await Promise.all([...this.caches.values()].map((c) => c.caughtUp()))
  }

  /** Ends the caches' backend watches; the backends stay open for their owner. */
  stop(): void {
    for (const cache of this.caches.values()) cache.stop()
  }
}
