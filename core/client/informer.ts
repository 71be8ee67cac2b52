/**
 * One resource's objects kept current in memory (upstream's shared informer
 * with its lister): listed once, then watched from the list's revision; a
 * watch that ends or fails is followed by a fresh list after a growing
 * pause, which also reports what went missing meanwhile as deleted. Every
 * component that reads a resource on each request or reconciles it shares
 * one informer (namespaces are read by half a dozen), reads its lister and
 * is told of changes through handlers; none reads storage itself.
 */
import type { Logger } from '../logging/logger.js'
import type { KubeObject } from '../machinery/object.js'
import type { ListWatch } from './list-watch.js'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

/** What a reader of an informer needs: the objects, and one object read fresh for a name the informer lacks. */
export interface ObjectReader {
  get(namespace: string, name: string): KubeObject | undefined
  list(namespace?: string): KubeObject[]
  read(namespace: string, name: string): Promise<KubeObject | undefined>
}

/** A change as handlers see it: `previous` is the object an update replaced. */
export type InformerChange = { type: 'put' | 'delete'; object: KubeObject; previous?: KubeObject }

/** Handlers in upstream's three-callback shape; each is optional. */
export interface InformerHandlers {
  onAdd?(object: KubeObject): void
  onUpdate?(previous: KubeObject, object: KubeObject): void
  onDelete?(object: KubeObject): void
}

/** Keys an object is filed under in a custom index (the pods of a node, the objects of an owner). */
export type IndexFunction = (object: KubeObject) => readonly string[]

const nameOf = (o: KubeObject): string => o.metadata.name ?? ''
const namespaceOf = (o: KubeObject): string => o.metadata.namespace ?? ''

export class SharedInformer implements ObjectReader {
  private readonly byNamespace = new Map<string, Map<string, KubeObject>>()
  private readonly listeners = new Set<(change: InformerChange) => void>()
  private readonly indexes = new Map<string, { keysOf: IndexFunction; entries: Map<string, Set<KubeObject>> }>()
  private hasList = false
  private stopped = false
  private stopWatch: (() => void) | undefined
  private wake: (() => void) | undefined
  /**
   * Settles with the first list: resolves once it is in (or the informer was
   * stopped before), rejects when it failed, so that a server whose
   * controls cannot load its objects fails start-up naming them (fail
   * closed). The informer keeps listing after such a failure; `synced`
   * waits for the list that succeeds.
   */
  readonly ready: Promise<void>
  /** Resolves once a list is in (or the informer was stopped): upstream's WaitForCacheSync. Never rejects. */
  readonly synced: Promise<void>

  constructor(
    private readonly source: ListWatch,
    private readonly logger: Logger,
    private readonly what = 'objects',
  ) {
    let firstList: { resolve(): void; reject(err: unknown): void } | undefined
    this.ready = new Promise<void>((resolve, reject) => (firstList = { resolve, reject }))
    // A reader that never asks for `ready` must not see its failure as an unhandled rejection.
    this.ready.catch(() => {})
    this.synced = new Promise<void>((loaded) => void this.follow(loaded, firstList!))
  }

  /** Whether the first list is in: until then the lister answers nothing. */
  hasSynced(): boolean {
    return this.hasList
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
   * The object, read from the source for a name the informer lacks: a
   * create may not have reached the watch yet (upstream's admission plugins
   * fall back to a live GET the same way).
   */
  async read(namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.get(namespace, name) ?? this.source.get(namespace, name)
  }

  /**
   * Files every object, present and future, under the keys `keysOf` gives
   * it; `byIndex(name, key)` then answers without a scan. Add indexes
   * before the objects matter: one added later is filled from what is held.
   */
  addIndex(name: string, keysOf: IndexFunction): void {
    if (this.indexes.has(name)) return
    const index = { keysOf, entries: new Map<string, Set<KubeObject>>() }
    this.indexes.set(name, index)
    for (const object of this.list()) this.fileUnder(index, object)
  }

  byIndex(name: string, key: string): KubeObject[] {
    const index = this.indexes.get(name)
    if (!index) throw new Error(`no index named ${name}`)
    return [...(index.entries.get(key) ?? [])]
  }

  /** Told of every change after the first list (a relist reports what it finds as puts). Returns the unsubscribe. */
  onChange(listener: (change: InformerChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Upstream's AddEventHandler: `onAdd` is called at once for every object
   * already held, then each change goes to the matching callback.
   */
  addHandlers(handlers: InformerHandlers): () => void {
    for (const object of this.list()) handlers.onAdd?.(object)
    return this.onChange((change) => {
      if (change.type === 'delete') handlers.onDelete?.(change.object)
      else if (change.previous) handlers.onUpdate?.(change.previous, change.object)
      else handlers.onAdd?.(change.object)
    })
  }

  stop(): void {
    this.stopped = true
    this.stopWatch?.()
    this.wake?.()
  }

  private put(object: KubeObject): void {
    const ns = namespaceOf(object)
    let objects = this.byNamespace.get(ns)
    if (!objects) this.byNamespace.set(ns, (objects = new Map()))
    const previous = objects.get(nameOf(object))
    objects.set(nameOf(object), object)
    for (const index of this.indexes.values()) {
      if (previous) this.unfile(index, previous)
      this.fileUnder(index, object)
    }
    this.tell(previous ? { type: 'put', object, previous } : { type: 'put', object })
  }

  private remove(object: KubeObject): void {
    const ns = namespaceOf(object)
    const objects = this.byNamespace.get(ns)
    const held = objects?.get(nameOf(object))
    objects?.delete(nameOf(object))
    if (objects?.size === 0) this.byNamespace.delete(ns)
    if (held) for (const index of this.indexes.values()) this.unfile(index, held)
    this.tell({ type: 'delete', object })
  }

  private fileUnder(index: { keysOf: IndexFunction; entries: Map<string, Set<KubeObject>> }, object: KubeObject): void {
    for (const key of index.keysOf(object)) {
      let objects = index.entries.get(key)
      if (!objects) index.entries.set(key, (objects = new Set()))
      objects.add(object)
    }
  }

  private unfile(index: { keysOf: IndexFunction; entries: Map<string, Set<KubeObject>> }, object: KubeObject): void {
    for (const key of index.keysOf(object)) {
      const objects = index.entries.get(key)
      objects?.delete(object)
      if (objects?.size === 0) index.entries.delete(key)
    }
  }

  private tell(change: InformerChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch (err) {
        this.logger.warn({ resource: this.what, err: String(err) }, 'a handler of an informer failed')
      }
    }
  }

  private async follow(loaded: () => void, firstList: { resolve(): void; reject(err: unknown): void }): Promise<void> {
    let delay = FIRST_RETRY_MS
    while (!this.stopped) {
      try {
        let list: Awaited<ReturnType<ListWatch['list']>>
        try {
          list = await this.source.list()
        } catch (err) {
          firstList.reject(err)
          throw err
        }
        if (this.stopped) break
        const seen = new Set(list.items.map((o) => `${namespaceOf(o)}/${nameOf(o)}`))
        for (const old of this.list()) if (!seen.has(`${namespaceOf(old)}/${nameOf(old)}`)) this.remove(old)
        for (const item of list.items) this.put(item)
        this.hasList = true
        firstList.resolve()
        loaded()
        const watcher = this.source.watch(list.revision)
        this.stopWatch = () => watcher.stop()
        for await (const event of watcher) {
          if (event.type === 'BOOKMARK') continue
          if (event.type === 'DELETED') this.remove(event.object)
          else this.put(event.object)
          delay = FIRST_RETRY_MS
        }
      } catch (err) {
        if (this.stopped) break
        this.logger.warn({ resource: this.what, err: String(err) }, 'an informer watch failed; listing again')
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
    firstList.resolve()
    loaded()
  }
}

/** What `followInformer` answers: settles once the informer has listed; `stop` ends the following, not the informer. */
export interface InformerFollower {
  readonly ready: Promise<void>
  stop(): void
}

/**
 * Feeds an index of a component's own from a shared informer: every object
 * held and each change after, as an upsert or a delete.
 */
export function followInformer(informer: SharedInformer, onEvent: (event: 'upsert' | 'delete', object: KubeObject) => void): InformerFollower {
  const stop = informer.addHandlers({
    onAdd: (object) => onEvent('upsert', object),
    onUpdate: (_previous, object) => onEvent('upsert', object),
    onDelete: (object) => onEvent('delete', object),
  })
  return { ready: informer.ready, stop }
}
