/**
 * One watch on a store that sees its own commits (the memory store, the
 * embedded store): each committed change is offered to every watcher, which
 * turns it into what its selection sees and queues it in a WatchChannel, so
 * writers never wait for a reader. With the watch's `bufferSize`, a
 * reader that falls that far behind has its watch ended (`onTerminated`).
 */
import { cloneJson, type KubeObject } from '../machinery/object.js'
import type { StorageEvent, StorageEventType, Watcher, WatchOptions } from './interface.js'
import { stampRevision } from './objects.js'
import { WatchChannel } from './watch-channel.js'

/** A committed write as watchers see it. Objects are frozen and shared; each delivery clones. */
export interface Change {
  revision: number
  key: string
  /** The new state, stamped with `revision`; for a deletion, the last state stamped with the deletion's revision. */
  object: KubeObject
  /** The state before the write; undefined for a creation. */
  prev: KubeObject | undefined
  deleted: boolean
}

type Predicate = (obj: KubeObject) => boolean

/** What a watch with `predicate` sees of a change (upstream cacher's transitions), or undefined for nothing. */
export function selectionEvent(
  change: Pick<Change, 'object' | 'prev' | 'deleted'>,
  predicate: Predicate | undefined,
): { type: StorageEventType; object: KubeObject; restamp: boolean } | undefined {
  const was = change.prev !== undefined && (!predicate || predicate(change.prev))
  if (change.deleted) return was ? { type: 'DELETED', object: change.object, restamp: false } : undefined
  const is = !predicate || predicate(change.object)
  if (is) return { type: was ? 'MODIFIED' : 'ADDED', object: change.object, restamp: false }
  // It left the selection: the watch sees it go, as its last matching state at this revision.
  if (was && change.prev) return { type: 'DELETED', object: change.prev, restamp: true }
  return undefined
}

export class StoreWatcher implements Watcher {
  /** Changes at or below this revision are covered by the watch's start (its snapshot, or before its resourceVersion). */
  afterRevision = 0
  /**
   * The store's revision, for BOOKMARKs on request: a store that publishes
   * each commit to its watchers as it makes it has queued every change up
   * to its current revision, so a BOOKMARK queued now may claim it.
   */
  storeRevision: (() => number) | undefined
  private readonly channel: WatchChannel
  private timer: ReturnType<typeof setInterval> | undefined

  /** Whether the watch follows `key` (under its prefix, or its one key; the selection aside). */
  readonly matchesKey: (key: string) => boolean

  constructor(
    /** What the watch follows: every key under a prefix that ends in `/`, or the one key. */
    readonly target: string,
    private readonly predicate: Predicate | undefined,
    release: (w: StoreWatcher) => void,
    bound: Pick<WatchOptions, 'bufferSize' | 'onTerminated' | 'readOnly'> = {},
  ) {
    this.readOnly = bound.readOnly === true
    this.matchesKey = target.endsWith('/') ? (key) => key.startsWith(target) : (key) => key === target
    const end = () => {
      if (this.timer !== undefined) clearInterval(this.timer)
      this.timer = undefined
      release(this)
    }
    const { bufferSize, onTerminated } = bound
    this.bufferSize = bufferSize || undefined
    this.channel = new WatchChannel(end, bufferSize ? { capacity: bufferSize, onOverflow: onTerminated ?? (() => {}) } : undefined)
  }

  /** The watcher only reads the events' objects (a watch cache): it gets the store's own, deep-frozen, not copies. */
  private readonly readOnly: boolean

  /** The start's events are all queued (resume): events from now on count against the buffer. */
  private live = false

  /** The bound's size, if the watch has one. */
  private readonly bufferSize: number | undefined

  /** Live changes that wait while the watch's first events are still being read (held), in order. */
  private held: Change[] | undefined

  /** Whether the store is still reading what the watch starts with (between hold() and resume()). */
  get starting(): boolean {
    return this.held !== undefined
  }

  /** From now until resume(), live changes wait: the store is still reading what the watch starts with. */
  hold(): void {
    this.held ??= []
  }

  /**
   * The watch's start is read: the changes that waited are delivered, and every event from now on is a
   * live one, bounded by the buffer. A store whose start queues its events before watch() returns calls
   * it then too.
   */
  resume(): void {
    const held = this.held ?? []
    this.held = undefined
    this.live = true
    for (const change of held) this.replay(change)
  }

  /** Whether the watch has ended (stopped, failed, or too slow): a store still reading its start can stop. */
  get ended(): boolean {
    return this.channel.ended
  }

  offer(change: Change): void {
    if (this.held) {
      if (this.channel.ended || !this.matchesKey(change.key)) return
      // More live changes than the buffer holds came while the start was read: delivered at resume, they would
      // end the watch then; it ends now, rather than holding every change made meanwhile.
      if (this.bufferSize !== undefined && this.held.length >= this.bufferSize) {
        this.held = []
        this.channel.overflow()
        return
      }
      this.held.push(change)
      return
    }
    this.replay(change)
  }

  /** Queues a change now, past any held ones: for the events a watch starts with. */
  replay(change: Change): void {
    if (this.channel.ended || change.revision <= this.afterRevision || !this.matchesKey(change.key)) return
    const event = selectionEvent(change, this.predicate)
    if (event) this.enqueue(event.type, event.object, change.revision, event.restamp)
  }

  /**
   * Queues `object`, a copy of it unless the watcher only reads it, stamped
   * with `revision` when `restamp` (an object leaving the selection shows its older state).
   */
  enqueue(type: StorageEventType, object: KubeObject, revision: number, restamp = false): void {
    if (this.channel.ended) return
    const event = this.readOnly && !restamp ? { type, object, revision } : { type, object: restamped(cloneJson(object), revision, restamp), revision }
    if (this.live) this.channel.push(event)
    else this.channel.pushStart(event)
  }

  /** Ends the watch with an error, delivered after anything already queued. */
  fail(err: unknown): void {
    this.channel.fail(err)
  }

  stop(): void {
    this.channel.stop()
  }

  startBookmarks(intervalMs: number, current: () => number): void {
    if (this.channel.ended) return
    this.timer = setInterval(() => {
      // A bookmark must not pass events still waiting to be delivered.
      if (this.held) return
      const revision = current()
      this.enqueue('BOOKMARK', { metadata: { resourceVersion: String(revision) } }, revision)
    }, intervalMs)
  }

  requestProgress(): void {
    // Changes still held (the start is being read) come before any BOOKMARK: ask again later.
    if (this.held || !this.storeRevision) return
    const revision = this.storeRevision()
    this.enqueue('BOOKMARK', { metadata: { resourceVersion: String(revision) } }, revision)
  }

  stopOn(signal: AbortSignal): void {
    this.channel.stopOn(signal)
  }

  next(): Promise<IteratorResult<StorageEvent, undefined>> {
    return this.channel.next()
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return this.channel[Symbol.asyncIterator]()
  }
}

function restamped(copy: KubeObject, revision: number, restamp: boolean): KubeObject {
  if (restamp) stampRevision(copy, revision)
  return copy
}
