/**
 * A thin wrapper around the in-memory store for watch cache tests: it counts
 * the reads and watches that reach the store, and can cut the store off
 * (an outage: open watches fail, new calls are refused) and hold back the
 * events of open watches. Everything else is the memory store's own behaviour.
 */
import type { KubeObject } from '../../../core/machinery/object.js'
import {
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadOptions,
  type Storage,
  StorageError,
  type StorageEvent,
  type TryUpdate,
  type Watcher,
  type WatchOptions,
} from '../../../core/storage/interface.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

export class ObservedStorage implements Storage {
  readonly lists: Array<{ prefix: string; opts: ListOptions }> = []
  /** The keys of the gets that reached the store. */
  readonly gets: string[] = []
  /** BOOKMARKs asked of open watches (Watcher.requestProgress). */
  progressRequests = 0
  /** Off: watches opened from now on have no requestProgress, as a store whose watches cannot answer one. */
  answersProgressRequests = true
  readonly watches: Array<{ prefix: string; opts: WatchOptions }> = []
  private readonly open = new Set<ObservedWatcher>()
  private down = false
  private held = false

  constructor(readonly inner = new MemoryStorage()) {}

  /** Open watches fail with Unavailable; lists and watches are refused until `restore`. */
  outage(): void {
    this.down = true
    for (const w of this.open) w.fail(unavailable())
  }

  restore(): void {
    this.down = false
  }

  /** The watches open now (not stopped, not failed). */
  openWatches(): number {
    return this.open.size
  }

  /** Open watches keep their events back until `release`, as a slow network would. */
  hold(): void {
    this.held = true
  }

  release(): void {
    this.held = false
    for (const w of this.open) w.flush()
  }

  isHeld(): boolean {
    return this.held
  }

  create(key: string, obj: KubeObject): Promise<KubeObject> {
    return this.inner.create(key, obj)
  }

  get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined> {
    this.gets.push(key)
    return this.inner.get(key, opts)
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.lists.push({ prefix, opts })
    if (this.down) throw unavailable()
    return this.inner.list(prefix, opts)
  }

  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: { preconditions?: Preconditions }): Promise<KubeObject> {
    return this.inner.guaranteedUpdate(key, tryUpdate, opts)
  }

  delete(key: string, opts?: { preconditions?: Preconditions }): Promise<KubeObject> {
    return this.inner.delete(key, opts)
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    this.watches.push({ prefix, opts })
    const w = new ObservedWatcher(this.inner.watch(prefix, opts), this, () => this.open.delete(w))
    this.open.add(w)
    if (this.down) w.fail(unavailable())
    return w
  }

  count(prefix: string): Promise<number> {
    return this.inner.count(prefix)
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision()
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}

class ObservedWatcher implements Watcher {
  private readonly events: AsyncIterator<StorageEvent, undefined>
  private failure: unknown
  private readonly waiting: Array<{ resolve: (r: IteratorResult<StorageEvent, undefined>) => void; reject: (e: unknown) => void }> = []
  private readonly buffer: Array<IteratorResult<StorageEvent, undefined>> = []
  private pulling = false
  private ended = false

  constructor(
    private readonly inner: Watcher,
    private readonly owner: ObservedStorage,
    private readonly release: () => void,
  ) {
    this.events = inner[Symbol.asyncIterator]()
    if (owner.answersProgressRequests)
      this.requestProgress = () => {
        owner.progressRequests++
        inner.requestProgress?.()
      }
  }

  fail(err: unknown): void {
    this.failure = err
    this.inner.stop()
    this.release()
    for (const w of this.waiting.splice(0)) w.reject(err)
  }

  flush(): void {
    while (this.waiting.length > 0 && this.buffer.length > 0) this.waiting.shift()!.resolve(this.buffer.shift()!)
    this.pull()
  }

  next(): Promise<IteratorResult<StorageEvent, undefined>> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    if (!this.owner.isHeld() && this.buffer.length > 0) return Promise.resolve(this.buffer.shift()!)
    if (this.ended && (!this.owner.isHeld() || this.buffer.length === 0)) return Promise.resolve({ done: true, value: undefined })
    const p = new Promise<IteratorResult<StorageEvent, undefined>>((resolve, reject) => this.waiting.push({ resolve, reject }))
    this.pull()
    return p
  }

  /** The store's BOOKMARK queues behind the events held here, as one on a slow network would. */
  requestProgress?: () => void

  stop(): void {
    this.ended = true
    this.buffer.length = 0
    this.inner.stop()
    this.release()
    for (const w of this.waiting.splice(0)) w.resolve({ done: true, value: undefined })
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return { next: () => this.next(), return: async () => (this.stop(), { done: true, value: undefined }) }
  }

  /** Reads the store's watch one event at a time into the buffer, handing it on unless held. */
  private pull(): void {
    if (this.pulling || this.ended || this.failure !== undefined) return
    this.pulling = true
    this.events.next().then(
      (r) => {
        this.pulling = false
        if (this.failure !== undefined) return
        if (r.done) this.ended = true
        this.buffer.push(r)
        if (!this.owner.isHeld()) this.flush()
        else if (!r.done) this.pull()
      },
      (err: unknown) => {
        this.pulling = false
        this.fail(err)
      },
    )
  }
}

function unavailable(): StorageError {
  return new StorageError('Unavailable', '', 'the store is unreachable')
}
