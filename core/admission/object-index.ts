/**
 * The objects of one resource kept current from storage, for the admission
 * plugins and their controllers that read them on every request (upstream's
 * informer listers): listed once, then watched from the list's revision; a
 * watch that ends or fails is followed by a fresh list after a growing
 * pause, which also reports what went missing meanwhile as deleted. `ready`
 * resolves after the first list, which is when upstream's plugins report
 * WaitForReady. One index per registry and resource is shared by every
 * plugin that reads it (namespaces are read by half a dozen).
 */
import type { Logger } from '../logging/logger.js'
import type { Registry } from '../registry/registry.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../machinery/object.js'
import type { Watcher } from '../storage/interface.js'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

/** What most plugins read of an index: the objects, and one object with a storage read for a name the index lacks. */
export interface ObjectReader {
  get(namespace: string, name: string): KubeObject | undefined
  list(namespace?: string): KubeObject[]
  read(namespace: string, name: string): Promise<KubeObject | undefined>
}

export type IndexChange = { type: 'put' | 'delete'; object: KubeObject; previous?: KubeObject }

export class ObjectIndex implements ObjectReader {
  private readonly byNamespace = new Map<string, Map<string, KubeObject>>()
  private readonly listeners = new Set<(change: IndexChange) => void>()
  private stopped = false
  private watcher: Watcher | undefined
  private wake: (() => void) | undefined
  /** Resolves once the first list is in (or the index was stopped before). */
  readonly ready: Promise<void>

  constructor(
    private readonly registry: Registry,
    private readonly entry: ResourceEntry,
    private readonly logger: Logger,
  ) {
    this.ready = new Promise<void>((loaded) => void this.follow(loaded))
  }

  /** The object, if the last list or watch event had it ('' as the namespace of a cluster-scoped one). */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.byNamespace.get(namespace)?.get(name)
  }

  /** Every object, or those of one namespace, in no particular order. */
  list(namespace?: string): KubeObject[] {
    if (namespace !== undefined) return [...(this.byNamespace.get(namespace)?.values() ?? [])]
    return [...this.byNamespace.values()].flatMap((objects) => [...objects.values()])
  }

  namespaces(): string[] {
    return [...this.byNamespace.keys()]
  }

  /**
   * The object, read from storage itself for a name the index lacks: a create
   * may not have reached the watch yet (upstream's plugins fall back to a
   * live GET the same way).
   */
  async read(namespace: string, name: string): Promise<KubeObject | undefined> {
    const known = this.get(namespace, name)
    if (known) return known
    const store = this.registry.store(this.entry)
    return store.storage.get(store.key(namespace, name))
  }

  /** Told of every change after the first list (a relist reports what it finds as puts). */
  onChange(listener: (change: IndexChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
    this.wake?.()
  }

  private put(object: KubeObject): void {
    const ns = object.metadata.namespace ?? ''
    let objects = this.byNamespace.get(ns)
    if (!objects) this.byNamespace.set(ns, (objects = new Map()))
    const previous = objects.get(object.metadata.name ?? '')
    objects.set(object.metadata.name ?? '', object)
    this.tell(previous ? { type: 'put', object, previous } : { type: 'put', object })
  }

  private remove(object: KubeObject): void {
    const ns = object.metadata.namespace ?? ''
    const objects = this.byNamespace.get(ns)
    objects?.delete(object.metadata.name ?? '')
    if (objects?.size === 0) this.byNamespace.delete(ns)
    this.tell({ type: 'delete', object })
  }

  private tell(change: IndexChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch (err) {
        this.logger.warn({ resource: this.entry.resource, err: String(err) }, 'a reader of an admission index failed')
      }
    }
  }

  private async follow(loaded: () => void): Promise<void> {
    const store = this.registry.store(this.entry)
    const prefix = store.prefix('')
    let delay = FIRST_RETRY_MS
    while (!this.stopped) {
      try {
        const list = await store.storage.list(prefix)
        if (this.stopped) break
        const seen = new Set(list.items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`))
        for (const old of this.list()) if (!seen.has(`${old.metadata.namespace ?? ''}/${old.metadata.name ?? ''}`)) this.remove(old)
        for (const item of list.items) this.put(item)
        loaded()
        this.watcher = store.storage.watch(prefix, { resourceVersion: String(list.revision) })
        for await (const event of this.watcher) {
          if (event.type === 'BOOKMARK') continue
          if (event.type === 'DELETED') this.remove(event.object)
          else this.put(event.object)
          delay = FIRST_RETRY_MS
        }
      } catch (err) {
        if (this.stopped) break
        this.logger.warn({ prefix, err: String(err) }, 'admission watch failed; listing again')
      }
      if (this.stopped) break
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay)
        ;(timer as { unref?: () => void }).unref?.()
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      delay = Math.min(delay * 2, MAX_RETRY_MS)
    }
    loaded()
  }
}

const shared = new WeakMap<Registry, Map<ResourceEntry, ObjectIndex>>()

/** The registry's one index of `entry`, made on first use; stopping it stops it for every reader (the server stops them together). */
export function sharedObjectIndex(registry: Registry, entry: ResourceEntry, logger: Logger): ObjectIndex {
  let byEntry = shared.get(registry)
  if (!byEntry) shared.set(registry, (byEntry = new Map()))
  let index = byEntry.get(entry)
  if (!index) byEntry.set(entry, (index = new ObjectIndex(registry, entry, logger)))
  return index
}

/** A plugin built over one resource's index, with the index's readiness and stop: what a factory answers. */
export function withObjectIndex<P>(
  registry: Registry,
  entry: ResourceEntry,
  logger: Logger,
  build: (index: ObjectIndex) => P,
): { plugin: P; ready: Promise<void>; stop(): void } {
  const index = sharedObjectIndex(registry, entry, logger)
  return { plugin: build(index), ready: index.ready, stop: () => index.stop() }
}
