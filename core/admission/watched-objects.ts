/**
 * The objects of one resource kept current from storage, by namespace (an
 * informer's lister, as upstream's plugins read quotas, limit ranges and
 * namespaces): listed, then watched from the list's revision; a watch that
 * ends or fails is followed by a fresh list after a growing pause. Plugins
 * read it on every request instead of a storage round trip.
 */
import type { Logger } from '../ports.js'
import type { Registry } from '../registry/registry.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../resources/object.js'
import type { Watcher } from '../storage/interface.js'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

export type WatchedChange = { type: 'put' | 'delete'; object: KubeObject; previous?: KubeObject }

export class WatchedObjects {
  private readonly byNamespace = new Map<string, Map<string, KubeObject>>()
  private readonly listeners = new Set<(change: WatchedChange) => void>()
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

  /** The objects of one namespace ('' for cluster-scoped ones), in no particular order. */
  list(namespace: string): KubeObject[] {
    return [...(this.byNamespace.get(namespace)?.values() ?? [])]
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.byNamespace.get(namespace)?.get(name)
  }

  namespaces(): string[] {
    return [...this.byNamespace.keys()]
  }

  /** Told of every change after the first list (a relist reports what it finds as puts). */
  onChange(listener: (change: WatchedChange) => void): () => void {
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

  private tell(change: WatchedChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch (err) {
        this.logger.warn({ resource: this.entry.resource, err: String(err) }, 'a watcher of admission objects failed')
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
        for (const ns of this.namespaces())
          for (const old of this.list(ns)) if (!seen.has(`${ns}/${old.metadata.name ?? ''}`)) this.remove(old)
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
