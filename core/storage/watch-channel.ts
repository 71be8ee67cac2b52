/**
 * The consumer side of a watch: a queue the producer (a store's commits, an etcd watch stream)
 * pushes into without ever waiting, read by `for await` at the consumer's
 * pace. The contract's ending rules live here: `stop()` ends the iteration at
 * once, even for a consumer already waiting, and drops what is queued; a
 * failure is delivered after the events queued before it; an AbortSignal or
 * a `break` out of the loop stops it.
 */
import type { StorageEvent, Watcher } from './interface.js'

type Waiter = { resolve: (r: IteratorResult<StorageEvent, undefined>) => void; reject: (e: unknown) => void }

/** How many events may wait for the reader, and who hears when a push finds them all waiting. */
export interface ChannelBound {
  capacity: number
  onOverflow: () => void
}

export class WatchChannel implements Watcher {
  private items: StorageEvent[] = []
  private head = 0
  /** Start events still queued (pushStart): the front of the queue, outside the bound. */
  private startLeft = 0
  private readonly waiting: Waiter[] = []
  private failure: unknown
  private done = false
  private abort: { signal: AbortSignal; listener: () => void } | undefined

  /**
   * `onEnd` runs once, when the watch stops or fails: release the stream and
   * timers there. With a `bound`, a reader that lets `capacity` events wait
   * gets them, then the end of the watch (it relists), instead of a queue
   * that grows as long as it stays slow; BOOKMARKs are dropped when full.
   */
  constructor(
    private readonly onEnd: () => void,
    private readonly bound?: ChannelBound,
  ) {}

  get ended(): boolean {
    return this.done
  }

  push(event: StorageEvent): void {
    if (this.done) return
    if (this.bound && this.items.length - this.head - this.startLeft >= this.bound.capacity) {
      if (event.type === 'BOOKMARK') return
      this.overflow()
      return
    }
    this.deliver(event)
  }

  /**
   * Queues one of the events the watch starts with (the state at its start, or the changes after its
   * resourceVersion), which the store reads at the watch's request rather than at the writers' pace: they
   * do not count against the bound, as upstream's watchers send their initial events apart from their
   * buffer. Counted against it, a start of more events than the buffer holds ended every such watch
   * before its reader had a turn (a watch from resourceVersion 0 of 1,001 objects, with the watch cache
   * off). Start events come before any live one.
   */
  pushStart(event: StorageEvent): void {
    if (this.done) return
    if (this.waiting.length === 0) this.startLeft++
    this.deliver(event)
  }

  /** Ends the watch as too slow: what is queued is delivered, then the end (the reader relists). */
  overflow(): void {
    if (this.done) return
    // Nobody waits while events are queued: the reader takes them, then sees the end.
    this.end()
    this.bound?.onOverflow()
  }

  private deliver(event: StorageEvent): void {
    const waiter = this.waiting.shift()
    if (waiter) waiter.resolve({ done: false, value: event })
    else this.items.push(event)
  }

  /** Ends the watch with an error, delivered after anything already queued. */
  fail(err: unknown): void {
    if (this.done) return
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
    this.items = []
    this.head = 0
    this.startLeft = 0
    this.failure = undefined
    this.end()
    for (const w of this.waiting.splice(0)) w.resolve({ done: true, value: undefined })
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
    if (this.head < this.items.length) {
      const value = this.items[this.head++]!
      if (this.startLeft > 0) this.startLeft--
      // Drop the consumed front now and then, so a long watch does not keep every event.
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head)
        this.head = 0
      }
      return Promise.resolve({ done: false, value })
    }
    if (this.failure !== undefined) {
      const err = this.failure
      this.failure = undefined
      return Promise.reject(err)
    }
    if (this.done) return Promise.resolve({ done: true, value: undefined })
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }))
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return {
      next: () => this.next(),
      // `break` out of a for-await loop lands here.
      return: async () => {
        this.stop()
        return { done: true, value: undefined }
      },
    }
  }

  private end(): void {
    if (this.done) return
    this.done = true
    if (this.abort) this.abort.signal.removeEventListener('abort', this.abort.listener)
    this.abort = undefined
    this.onEnd()
  }
}
