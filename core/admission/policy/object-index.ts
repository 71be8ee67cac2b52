/**
 * A watch-fed index of one resource's objects (an informer): listed once,
 * then kept current from a watch that starts at the list's revision; a watch
 * that ends or fails is followed by a fresh list, with a growing pause.
 * Admission reads policies, bindings and parameter objects from these, so a
 * request costs no storage read and a change acts as soon as its event comes.
 */
import type { Logger } from '../../ports.js'
import type { Registry } from '../../registry/registry.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../resources/object.js'
import type { Watcher } from '../../storage/interface.js'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

const keyOf = (obj: KubeObject): string => `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`

export class ObjectIndex {
  private readonly objects = new Map<string, KubeObject>()
  private readonly listeners = new Set<() => void>()
  private stopped = false
  private watcher: Watcher | undefined
  private wake: (() => void) | undefined
  /** Resolves once the first list is in (or the index is stopped before it). */
  readonly ready: Promise<void>

  constructor(
    registry: Registry,
    readonly entry: ResourceEntry,
    private readonly logger: Logger,
  ) {
    this.ready = new Promise((loaded) => void this.follow(registry, loaded))
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace}/${name}`)
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): KubeObject[] {
    const all = [...this.objects.values()]
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace)
  }

  /** Called after each change; returns the way to stop listening. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
    this.wake?.()
  }

  private changed(): void {
    for (const listener of this.listeners) listener()
  }

  private async follow(registry: Registry, loaded: () => void): Promise<void> {
    const store = registry.store(this.entry)
    const prefix = store.prefix('')
    let delay = FIRST_RETRY_MS
    while (!this.stopped) {
      try {
        const list = await store.storage.list(prefix)
        if (this.stopped) break
        this.objects.clear()
        for (const obj of list.items) this.objects.set(keyOf(obj), obj)
        this.changed()
        loaded()
        this.watcher = store.storage.watch(prefix, { resourceVersion: String(list.revision) })
        for await (const event of this.watcher) {
          if (event.type === 'BOOKMARK') continue
          if (event.type === 'DELETED') this.objects.delete(keyOf(event.object))
          else this.objects.set(keyOf(event.object), event.object)
          delay = FIRST_RETRY_MS
          this.changed()
        }
      } catch (err) {
        if (this.stopped) break
        this.logger.warn({ prefix, err: String(err) }, 'admission policy watch failed; listing again')
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
