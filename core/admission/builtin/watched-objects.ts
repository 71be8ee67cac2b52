/**
 * One resource's objects kept in memory for the plugins that read them on
 * every request (upstream's informer listers): listed at start, then
 * followed by a watch, so that a decision never costs a storage round trip.
 * The plugin's factory starts it and hands its `ready` and `stop` to the server.
 */
import { feedObjects } from '../../authz/object-feed.js'
import type { Logger } from '../../ports.js'
import type { Registry } from '../../registry/registry.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../resources/object.js'

export interface WatchedObjects {
  /** The object of that name (and namespace, for a namespaced resource), as last seen. */
  get(name: string, namespace?: string): KubeObject | undefined
  /** Every object last seen. */
  list(): KubeObject[]
  /** Settles once the first list has been taken in. */
  readonly ready: Promise<void>
  stop(): void
}

const keyOf = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`

/** Follows `entry`'s objects from the first call on; the list is kept until `stop`. */
export function watchObjects(registry: Registry, entry: ResourceEntry, logger: Logger): WatchedObjects {
  const objects = new Map<string, KubeObject>()
  const store = registry.store(entry)
  const feed = feedObjects(
    store.storage,
    store.prefix(''),
    (event, obj) => {
      const key = keyOf(obj.metadata.namespace, obj.metadata.name)
      if (event === 'delete') objects.delete(key)
      else objects.set(key, obj)
    },
    logger,
  )
  return {
    get: (name, namespace) => objects.get(keyOf(namespace, name)),
    list: () => [...objects.values()],
    ready: feed.ready,
    stop: () => feed.stop(),
  }
}

/** A plugin built over one watched resource, with the index's readiness and stop (a factory's answer). */
export function withWatched<P>(
  registry: Registry,
  entry: ResourceEntry,
  logger: Logger,
  build: (objects: WatchedObjects) => P,
): { plugin: P; ready: Promise<void>; stop(): void } {
  const objects = watchObjects(registry, entry, logger)
  return { plugin: build(objects), ready: objects.ready, stop: () => objects.stop() }
}
