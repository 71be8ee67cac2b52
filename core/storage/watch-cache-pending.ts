/**
 * A watch asked of a cache that is still (re)loading: `watch` must answer at
 * once, so this stands in until the cache can tell where the watch is
 * served from (itself, or the backend) and then passes everything through.
 * Upstream's cacher makes the request wait for readiness the same way.
 */
import type { StorageEvent, Watcher } from './interface.js'

export class PendingWatcher implements Watcher {
  private inner: AsyncIterator<StorageEvent, undefined> | undefined
  private source: Watcher | undefined
  private stopped = false
  /** Why the watch could not start (a storage error); the first read throws it. */
  private failure: unknown
  private readonly started: Promise<void>
  /** Settles when stopped, so a reader waiting for the start is released at once. */
  private readonly halted: Promise<void>
  private halt: () => void = () => {}

  /** `start` resolves to the real watch, or to undefined when the cache went away first. */
  constructor(start: Promise<Watcher | undefined>, signal?: AbortSignal) {
    this.halted = new Promise((resolve) => (this.halt = resolve))
    this.started = start.then(
      (watcher) => {
        if (!watcher) return
        if (this.stopped) watcher.stop()
        else {
          this.source = watcher
          this.inner = watcher[Symbol.asyncIterator]()
        }
      },
      (err: unknown) => {
        this.failure = err
      },
    )
    signal?.addEventListener('abort', () => this.stop(), { once: true })
    if (signal?.aborted) this.stop()
  }

  async next(): Promise<IteratorResult<StorageEvent, undefined>> {
    await Promise.race([this.started, this.halted])
    if (this.failure !== undefined && !this.stopped) {
      const failure = this.failure
      this.stop()
      throw failure
    }
    if (this.stopped || !this.inner) return { done: true, value: undefined }
    return this.inner.next()
  }

  stop(): void {
    this.stopped = true
    this.halt()
    this.source?.stop()
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
}
