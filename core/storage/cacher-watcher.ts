/**
 * One client watch served by a resource's watch cache (upstream's
 * cacheWatcher). It first replays a backlog (the cached objects as ADDED
 * events, or the window's changes after the client's resourceVersion), then
 * the live changes the cache offers it. Live changes wait in a bounded queue:
 * a client that falls that far behind is ended, as upstream ends a watcher
 * whose buffer is full, so it relists instead of holding memory and never
 * slowing anyone else down.
 */
import { cloneJson, type KubeObject } from '../machinery/object.js'
import type { CachedChange } from './cacher-store.js'
import { revisionOf } from './objects.js'
import { selectionEvent } from './store-watcher.js'
import type { StorageEvent, StorageEventType, Watcher } from './interface.js'

type Predicate = (obj: KubeObject) => boolean

/** What the watch replays before live changes: objects at their own revisions, or past changes. */
export type Backlog = { objects: readonly KubeObject[] } | { changes: readonly CachedChange[] }

export interface CacheWatcherOptions {
  /** Which keys this watch covers. */
  matchesKey: (key: string) => boolean
  predicate: Predicate | undefined
  /** Live changes at or below this revision are already covered by the backlog or the client's resourceVersion. */
  after: number
  backlog: Backlog
  /** Live events that may wait before the watch is ended as too slow. */
  capacity: number
  /** Unsubscribes the watch from its cache; called once when it ends. */
  release: () => void
  /** Told when the watch is ended for falling `capacity` events behind (upstream counts these). */
  onTerminated?: () => void
  /** The client only encodes what it gets: it may have the cache's frozen objects, uncopied. */
  readOnly?: boolean
}

interface Queued {
  type: StorageEventType
  /** The cached (frozen) object; cloned on delivery so each client owns its copy. */
  object: KubeObject
  revision: number
  /** Deliver with resourceVersion = revision (a DELETED made from an earlier state). */
  restamp: boolean
}

type Waiter = (r: IteratorResult<StorageEvent, undefined>) => void

export class CacheWatcher implements Watcher {
  private readonly backlog: Backlog
  private backlogAt = 0
  private readonly queue: Queued[] = []
  private queueHead = 0
  private readonly waiting: Waiter[] = []
  /** A consumer that polls, waiting to hear that it may poll again. */
  private readyListener: (() => void) | undefined
  /** No live event is accepted any more (stopped, too slow, or its cache went away). */
  private closed = false
  /** Nothing more will be delivered, not even what is queued. */
  private discarded = false
  private timer: ReturnType<typeof setInterval> | undefined
  private abort: { signal: AbortSignal; listener: () => void } | undefined

  constructor(private readonly opts: CacheWatcherOptions) {
    this.backlog = opts.backlog
  }

  /** Turns a cached change into what this watch sees, with upstream's predicate transitions. */
  offer(change: CachedChange): void {
    if (this.closed || change.revision <= this.opts.after) return
    const event = this.convert(change)
    if (event) this.enqueue(event)
  }

  /** A BOOKMARK at `revision`, unless the queue is full (bookmarks are best effort, as upstream's). */
  bookmark(revision: number): void {
    if (this.closed || revision < this.opts.after || this.queued() >= this.opts.capacity) return
    this.enqueue({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(revision) } }, revision, restamp: false })
  }

  /** True while it wants BOOKMARKs that the cache, still at `revision`, may not send yet. */
  awaitsBookmark(revision: number): boolean {
    return this.timer !== undefined && revision < this.opts.after
  }

  /** Sends a BOOKMARK every `intervalMs` while the watch lives, at the revision `current` gives. */
  startBookmarks(intervalMs: number, current: () => number): void {
    if (this.closed) return
    this.timer = setInterval(() => this.bookmark(current()), intervalMs)
  }

  stopOn(signal: AbortSignal): void {
    if (signal.aborted) {
      this.stop()
      return
    }
    const listener = () => this.stop()
    signal.addEventListener('abort', listener, { once: true })
    this.abort = { signal, listener }
  }

  /** Ends the watch after what is already queued: the client then relists or re-watches. */
  end(): void {
    this.close()
    if (!this.pending()) this.finishWaiting()
  }

  stop(): void {
    this.discarded = true
    this.close()
    this.finishWaiting()
  }

  next(): Promise<IteratorResult<StorageEvent, undefined>> {
    const event = this.take()
    if (event) return Promise.resolve({ done: false, value: event })
    if (this.closed) return Promise.resolve({ done: true, value: undefined })
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  poll(): IteratorResult<StorageEvent, undefined> | undefined {
    const event = this.take()
    if (event) return { done: false, value: event }
    return this.closed ? { done: true, value: undefined } : undefined
  }

  whenReady(listener: () => void): void {
    this.readyListener = listener
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return {
      next: () => this.next(),
      return: async () => {
        this.stop()
        return { done: true, value: undefined }
      },
    }
  }

  private convert(change: CachedChange): Queued | undefined {
    if (!this.opts.matchesKey(change.key)) return undefined
    const event = selectionEvent({ object: change.object, prev: change.previous, deleted: change.deleted }, this.opts.predicate)
    // Every field named, not a spread with `revision` added: this runs for each watcher of each change, and under
    // Node 20's V8 the spread took a slow path (machinery/object.ts, `extended`).
    return event && { type: event.type, object: event.object, revision: change.revision, restamp: event.restamp }
  }

  private enqueue(event: Queued): void {
    if (event.type !== 'BOOKMARK' && this.queued() >= this.opts.capacity) {
      this.end()
      this.opts.onTerminated?.()
      return
    }
    this.queue.push(event)
    // A reader waits only when nothing was pending, so the event goes straight to it.
    const waiter = this.waiting.shift()
    if (waiter) waiter({ done: false, value: this.take()! })
    else this.wakeListener()
  }

  private wakeListener(): void {
    const listener = this.readyListener
    this.readyListener = undefined
    listener?.()
  }

  private take(): StorageEvent | undefined {
    if (this.discarded) return undefined
    const fromBacklog = this.takeBacklog()
    if (fromBacklog) return fromBacklog
    if (this.queueHead >= this.queue.length) return undefined
    const queued = this.queue[this.queueHead++]!
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead)
      this.queueHead = 0
    }
    return deliver(queued, this.opts.readOnly)
  }

  private takeBacklog(): StorageEvent | undefined {
    const b = this.backlog
    if ('objects' in b) {
      while (this.backlogAt < b.objects.length) {
        const obj = b.objects[this.backlogAt++]!
        // Each object as ADDED at its own revision, as upstream's initial events.
        if (!this.opts.predicate || this.opts.predicate(obj)) return deliver({ type: 'ADDED', object: obj, revision: revisionOf(obj), restamp: false }, this.opts.readOnly)
      }
      return undefined
    }
    while (this.backlogAt < b.changes.length) {
      const event = this.convert(b.changes[this.backlogAt++]!)
      if (event) return deliver(event, this.opts.readOnly)
    }
    return undefined
  }

  private pending(): boolean {
    if (this.discarded) return false
    const b = this.backlog
    const backlogLeft = 'objects' in b ? this.backlogAt < b.objects.length : this.backlogAt < b.changes.length
    return backlogLeft || this.queueHead < this.queue.length
  }

  private queued(): number {
    return this.queue.length - this.queueHead
  }

  private close(): void {
    if (this.closed) return
    this.closed = true
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    if (this.abort) this.abort.signal.removeEventListener('abort', this.abort.listener)
    this.abort = undefined
    this.opts.release()
  }

  private finishWaiting(): void {
    for (const w of this.waiting.splice(0)) w({ done: true, value: undefined })
    this.wakeListener()
  }
}

function deliver(q: Queued, readOnly = false): StorageEvent {
  if (readOnly && !q.restamp) return { type: q.type, object: q.object, revision: q.revision }
  const object = cloneJson(q.object)
  if (q.restamp) object.metadata.resourceVersion = String(q.revision)
  return { type: q.type, object, revision: q.revision }
}
