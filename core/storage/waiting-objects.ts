/**
 * What a watch cache whose resources load on first use (`startOnFirstUse`)
 * tells its observers of the resources that have not loaded yet: each
 * object stored under them, and each one a change writes there, read by
 * one backend watch over all of the cache's keys rather than by a cache per
 * resource. An observer that must see every stored object (the garbage
 * collector's start on demand) then loads no resource's cache by itself.
 * Objects of loaded resources may be told twice; observers take that
 * already, as a cache that loads again tells its objects again.
 */
import type { KubeObject } from '../machinery/object.js'
import type { ObjectObserver } from './cacher.js'
import type { ListResult, Storage, Watcher } from './interface.js'

export class WaitingObjects {
  private watcher: Watcher | undefined
  private stopped = false
  /** The list in flight: observers added meanwhile (a server's, at its start) share it. */
  private listing: Promise<ListResult> | undefined

  constructor(
    private readonly backend: Storage,
    /** The directory every cached prefix lies in (`/registry/`). */
    private readonly root: string,
    private readonly observers: ReadonlySet<ObjectObserver>,
    /** Whether some resource still waits for its first use. */
    private readonly waiting: () => boolean,
    private readonly tell: (observer: ObjectObserver, object: KubeObject) => void,
  ) {}

  /** Tells `observer` of every object stored now, then, with the other observers, of each change, while resources wait. */
  async tellHeld(observer: ObjectObserver): Promise<void> {
    this.listing ??= this.backend.list(this.root, { readOnly: true }).finally(() => (this.listing = undefined))
    const { items, revision } = await this.listing
    if (this.stopped || !this.observers.has(observer)) return
    for (const object of items) this.tell(observer, object)
    if (!this.watcher && this.wanted()) this.follow(revision)
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
  }

  private wanted(): boolean {
    return !this.stopped && this.observers.size > 0 && this.waiting()
  }

  private follow(revision: number): void {
    const watcher = this.backend.watch(this.root, { resourceVersion: String(revision), readOnly: true })
    this.watcher = watcher
    void (async () => {
      try {
        for await (const event of watcher) {
          if (!this.wanted()) break
          if (event.type === 'ADDED' || event.type === 'MODIFIED') for (const observer of this.observers) this.tell(observer, event.object)
        }
      } catch {
        // Ended by the store (a restore, a compaction): read again below.
      }
      watcher.stop()
      this.watcher = undefined
      if (this.wanted()) await this.catchUp()
    })()
  }

  /** After the watch ended under it: every observer hears the stored objects again, and the watch resumes from there. */
  private async catchUp(): Promise<void> {
    try {
      const { items, revision } = await this.backend.list(this.root, { readOnly: true })
      if (!this.wanted() || this.watcher) return
      for (const object of items) for (const observer of this.observers) this.tell(observer, object)
      this.follow(revision)
    } catch {
      // The backend is gone (the server stops): nothing more to tell.
    }
  }
}

/** The longest directory (ending in "/") that every prefix starts with: the one the first and last of them in order share. */
export function commonDirectory(prefixes: Iterable<string>): string {
  let first: string | undefined
  let last: string | undefined
  for (const prefix of prefixes) {
    if (first === undefined || prefix < first) first = prefix
    if (last === undefined || prefix > last) last = prefix
  }
  if (first === undefined || last === undefined) return '/'
  let i = 0
  while (i < first.length && first[i] === last[i]) i++
  return first.slice(0, first.lastIndexOf('/', i - 1) + 1) || '/'
}
