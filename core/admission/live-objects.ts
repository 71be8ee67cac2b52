/**
 * The objects of one resource kept current from storage, for admission
 * plugins that read them on every request (upstream's informer listers):
 * listed once, then watched from the list's revision; a watch that ends or
 * fails is followed by a fresh list after a growing pause. `ready` resolves
 * after the first list, which is when upstream's plugins report WaitForReady.
 */
import type { Logger } from '../ports.js'
import type { Registry } from '../registry/registry.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../resources/object.js'
import type { Watcher } from '../storage/interface.js'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

/** What a plugin reads of an index: the objects, and one object with a storage read for a name the index lacks. */
export interface ObjectReader {
  list(namespace?: string): KubeObject[]
  read(namespace: string, name: string): Promise<KubeObject | undefined>
}

const keyOf = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`

export class LiveObjects implements ObjectReader {
  private readonly objects = new Map<string, KubeObject>()
  private stopped = false
  private watcher: Watcher | undefined
  private wake: (() => void) | undefined
  readonly ready: Promise<void>

  constructor(
    private readonly registry: Registry,
    private readonly entry: ResourceEntry,
    private readonly logger: Logger,
  ) {
    this.ready = new Promise<void>((loaded) => void this.follow(loaded))
  }

  /** The object, if the last list or watch event had it. */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(keyOf(namespace, name))
  }

  /** Every object (of one namespace, when given). */
  list(namespace?: string): KubeObject[] {
    const all = [...this.objects.values()]
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace)
  }

  /**
   * The object read from storage itself: for a name the index lacks, since a
   * create may not have reached the watch yet (upstream's plugins fall back
   * to a live GET the same way).
   */
  async read(namespace: string, name: string): Promise<KubeObject | undefined> {
    const cached = this.get(namespace, name)
    if (cached) return cached
    const store = this.registry.store(this.entry)
    return store.storage.get(store.key(namespace, name))
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
    this.wake?.()
  }

  private async follow(loaded: () => void): Promise<void> {
    let delay = FIRST_RETRY_MS
    while (!this.stopped) {
      const store = this.registry.store(this.entry)
      const prefix = store.prefix('')
      try {
        const list = await store.storage.list(prefix)
        if (this.stopped) break
        this.objects.clear()
        for (const o of list.items) this.objects.set(keyOf(o.metadata.namespace, o.metadata.name ?? ''), o)
        loaded()
        this.watcher = store.storage.watch(prefix, { resourceVersion: String(list.revision) })
        for await (const event of this.watcher) {
          if (event.type === 'BOOKMARK') continue
          const key = keyOf(event.object.metadata.namespace, event.object.metadata.name ?? '')
          if (event.type === 'DELETED') this.objects.delete(key)
          else this.objects.set(key, event.object)
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

const shared = new WeakMap<Registry, Map<ResourceEntry, LiveObjects>>()

/** One index per registry and resource, shared by the plugins that read it (namespaces are read by several). */
export function sharedLiveObjects(registry: Registry, entry: ResourceEntry, logger: Logger): LiveObjects {
  let byEntry = shared.get(registry)
  if (!byEntry) shared.set(registry, (byEntry = new Map()))
  let live = byEntry.get(entry)
  if (!live) byEntry.set(entry, (live = new LiveObjects(registry, entry, logger)))
  return live
}
