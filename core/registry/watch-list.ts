/**
 * Watch-list (KEP-3157, `sendInitialEvents`): a watch that first streams the
 * collection's state as ADDED events, marks their end with a BOOKMARK
 * annotated `k8s.io/initial-events-end: "true"` at the state's revision, and
 * then goes on with the changes after it, so an informer needs no LIST.
 * It works over any storage: the state is one list read by upstream's rules
 * (resourceVersion unset: consistent; "0": any; N: not older than N), which
 * the watch cache answers from memory where it can.
 */
import type { KubeObject } from '../machinery/object.js'
import type { Storage, StorageEvent, Watcher, WatchOptions } from '../storage/interface.js'

/** The annotation of the BOOKMARK that ends the initial events (upstream's metav1.InitialEventsAnnotationKey). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end'

export interface WatchListOptions {
  /** The collection (ending in `/`) whose state the initial events show. */
  listPrefix: string
  /** What the watch follows afterwards: the same collection, or one key of it. */
  target: string
  resourceVersion: string | undefined
  /** false: no initial events, the watch starts at the latest revision (or at `resourceVersion` N). */
  sendInitialEvents: boolean
  predicate: ((obj: KubeObject) => boolean) | undefined
  /** As upstream, the closing BOOKMARK (and any other) only goes to clients that allow bookmarks. */
  allowWatchBookmarks: boolean
  bookmarkIntervalMs: number
  signal: AbortSignal
  /** Turns a failure of the initial read into what the client sees in the ERROR event. */
  interpretError: (err: unknown) => unknown
  /**
   * The client only encodes the events: the initial state may be the watch cache's own frozen objects, uncopied.
   * A copy of every object of a large collection held the thread for hundreds of milliseconds at the watch's start.
   */
  readOnly?: boolean
  /** How far the client may fall behind a watch the storage serves itself. */
  bound?: Pick<WatchOptions, 'bufferSize' | 'onTerminated'>
}

export class WatchListWatcher implements Watcher {
  private initial: Array<StorageEvent | undefined> = []
  private at = 0
  private source: Watcher | undefined
  private follow: AsyncIterator<StorageEvent, undefined> | undefined
  private stopped = false
  private readonly started: Promise<void>
  private readonly halted: Promise<void>
  private halt: () => void = () => {}

  constructor(storage: Storage, opts: WatchListOptions) {
    this.halted = new Promise((resolve) => (this.halt = resolve))
    this.started = this.start(storage, opts)
    // A failed start is reported by next(); nobody may be reading yet.
    this.started.catch(() => {})
    opts.signal.addEventListener('abort', () => this.stop(), { once: true })
  }

  async next(): Promise<IteratorResult<StorageEvent, undefined>> {
    await Promise.race([this.started, this.halted])
    if (this.stopped) return { done: true, value: undefined }
    if (this.at < this.initial.length) {
      const event = this.initial[this.at]!
      // Let go of what was sent: the initial state may be large.
      this.initial[this.at++] = undefined
      return { done: false, value: event }
    }
    return this.follow!.next()
  }

  stop(): void {
    this.stopped = true
    this.initial = []
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

  private async start(storage: Storage, opts: WatchListOptions): Promise<void> {
    const rv = opts.resourceVersion
    let from: string
    try {
      if (opts.sendInitialEvents) from = String(await this.readInitialState(storage, opts))
      // Without initial events "" and "0" mean: from now on.
      else from = rv === undefined || rv === '0' ? String(await storage.currentRevision()) : rv
    } catch (err) {
      throw opts.interpretError(err)
    }
    if (this.stopped) return
    this.source = storage.watch(opts.target, {
      resourceVersion: from,
      ...(opts.predicate ? { predicate: opts.predicate } : {}),
      bookmarks: opts.allowWatchBookmarks,
      bookmarkIntervalMs: opts.bookmarkIntervalMs,
      signal: opts.signal,
      readOnly: opts.readOnly === true,
      ...opts.bound,
    })
    this.follow = this.source[Symbol.asyncIterator]()
  }

  /** Queues the state's objects and the closing BOOKMARK; returns the state's revision. */
  private async readInitialState(storage: Storage, opts: WatchListOptions): Promise<number> {
    const rv = opts.resourceVersion
    const list = await storage.list(opts.listPrefix, {
      ...(rv === undefined ? {} : { resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' as const }),
      ...(opts.predicate ? { predicate: opts.predicate } : {}),
      readOnly: opts.readOnly === true,
    })
    // The selectors' predicate (a watch pinned to one name included) already narrowed the list.
    for (const object of list.items) this.initial.push({ type: 'ADDED', object, revision: Number(object.metadata.resourceVersion) })
    if (opts.allowWatchBookmarks) {
      const metadata = { resourceVersion: String(list.revision), annotations: { [INITIAL_EVENTS_END]: 'true' } }
      this.initial.push({ type: 'BOOKMARK', object: { metadata }, revision: list.revision })
    }
    return list.revision
  }
}
