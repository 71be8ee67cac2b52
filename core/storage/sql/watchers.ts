/**
 * Watch fan-out for the SQL store. The process that owns the database file is
 * its only writer, so every committed change passes through `publish` right
 * after its commit; a watch from an older revision is first fed the rows it
 * missed (replayed from the log), then joins the live stream, with nothing
 * lost or doubled in between because both happen in one synchronous step.
 *
 * Each watcher queues events for its consumer, so writers never wait on a
 * slow reader; the HTTP layer bounds how long a watch lives.
 */
import type { KubeObject } from '../../resources/object.js'
import type { StorageEvent, StorageEventType, Watcher } from '../interface.js'
import { stampRevision } from './objects.js'

/** A committed write as watchers see it. Objects are frozen and shared; each delivery clones. */
export interface Change {
  revision: number
  key: string
  /** The new state, stamped with `revision`; for a deletion, the last state stamped with the deletion's revision. */
  object: KubeObject
  /** The live state before the write; undefined for a creation. */
  prev: KubeObject | undefined
  deleted: boolean
}

type Predicate = (obj: KubeObject) => boolean

interface Queued {
  type: StorageEventType
  object: KubeObject
  revision: number
  /** Hand the object out stamped with `revision` (an object leaving the selection shows its older state). */
  restamp: boolean
}

type Waiter = { resolve: (r: IteratorResult<StorageEvent, undefined>) => void; reject: (e: unknown) => void }

export class ChangeWatcher implements Watcher {
  /** Changes at or below this revision are already covered by the watch's start. */
  afterRevision = 0
  private queue: Queued[] = []
  private head = 0
  private readonly waiting: Waiter[] = []
  private failure: unknown
  private ended = false
  private timer: ReturnType<typeof setInterval> | undefined
  private abort: { signal: AbortSignal; listener: () => void } | undefined

  constructor(
    private readonly matchesKey: (key: string) => boolean,
    private readonly predicate: Predicate | undefined,
    private readonly release: (w: ChangeWatcher) => void,
  ) {}

  /** Turns a change into this watcher's event, with upstream's predicate transitions (cacher). */
  offer(c: Change): void {
    if (this.ended || c.revision <= this.afterRevision || !this.matchesKey(c.key)) return
    const p = this.predicate
    const was = c.prev !== undefined && (!p || p(c.prev))
    if (c.deleted) {
      if (was) this.enqueue('DELETED', c.object, c.revision)
      return
    }
    const is = !p || p(c.object)
    if (is && was) this.enqueue('MODIFIED', c.object, c.revision)
    else if (is) this.enqueue('ADDED', c.object, c.revision)
    // It left the selection: the watcher sees it go, as its last matching state at this revision.
    else if (was && c.prev) this.enqueue('DELETED', c.prev, c.revision, true)
  }

  enqueue(type: StorageEventType, object: KubeObject, revision: number, restamp = false): void {
    if (this.ended) return
    const item: Queued = { type, object, revision, restamp }
    const waiter = this.waiting.shift()
    if (waiter) waiter.resolve({ done: false, value: deliver(item) })
    else this.queue.push(item)
  }

  /** Ends the watch with an error, delivered after anything already queued. */
  fail(err: unknown): void {
    if (this.ended) return
    this.failure = err
    this.end()
    const waiter = this.waiting.shift()
    if (waiter) {
      this.failure = undefined
      waiter.reject(err)
    }
    for (const w of this.waiting.splice(0)) w.resolve({ done: true, value: undefined })
  }

  stop(): void {
    this.queue = []
    this.head = 0
    this.failure = undefined
    this.end()
    for (const w of this.waiting.splice(0)) w.resolve({ done: true, value: undefined })
  }

  startBookmarks(intervalMs: number, current: () => number): void {
    if (this.ended) return
    this.timer = setInterval(() => {
      const revision = current()
      this.enqueue('BOOKMARK', { metadata: { resourceVersion: String(revision) } }, revision)
    }, intervalMs)
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

  next(): Promise<IteratorResult<StorageEvent, undefined>> {
    const item = this.shift()
    if (item) return Promise.resolve({ done: false, value: deliver(item) })
    if (this.failure !== undefined) {
      const err = this.failure
      this.failure = undefined
      return Promise.reject(err)
    }
    if (this.ended) return Promise.resolve({ done: true, value: undefined })
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }))
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return {
      next: () => this.next(),
      // Leaving a for-await loop early lands here.
      return: async () => {
        this.stop()
        return { done: true, value: undefined }
      },
    }
  }

  private shift(): Queued | undefined {
    if (this.head >= this.queue.length) return undefined
    const item = this.queue[this.head++]
    // Drop the consumed front now and then instead of paying Array.shift per event.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** Releases the subscription, timer and signal listener; queued events stay readable. */
  private end(): void {
    if (this.ended) return
    this.ended = true
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    if (this.abort) this.abort.signal.removeEventListener('abort', this.abort.listener)
    this.abort = undefined
    this.release(this)
  }
}

function deliver(item: Queued): StorageEvent {
  const object = structuredClone(item.object)
  if (item.restamp) stampRevision(object, item.revision)
  return { type: item.type, object, revision: item.revision }
}
