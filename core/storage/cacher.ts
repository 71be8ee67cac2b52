/**
 * The watch cache of one resource (upstream's Cacher with its reflector and
 * watchCache): ONE backend watch keeps the current objects and a window of
 * recent changes, and every client watch and `resourceVersion`-relaxed list
 * of the resource is served from them. What the cache cannot answer goes to
 * the backend, by upstream's rules (cacher.go `shouldDelegateList`, `Watch`).
 *
 * Freshness: the cache's revision moves with the changes it sees, and with
 * the backend's BOOKMARKs, which it asks for only while a read waits for a
 * revision it has not reached (upstream's conditional progress requester).
 * So an idle cache holds no timer.
 */
import type { Logger } from '../logging/logger.js'
import { cloneJson, type KubeObject } from '../machinery/object.js'
import { type CachedChange, EventWindow, ObjectIndex } from './cacher-store.js'
import { deepFreeze } from './objects.js'
import { parseGoUint64 } from '../machinery/go-strconv.js'
import { resourceVersionSyntaxError } from './errors.js'
import { type Backlog, CacheWatcher } from './cacher-watcher.js'
import {
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type Storage,
  StorageError,
  type StorageEvent,
  type Watcher,
  type WatchOptions,
} from './interface.js'
import { PendingWatcher } from './watch-cache-pending.js'

export interface CacherOptions {
  /** Changes kept for watches from a recent resourceVersion. */
  historySize: number
  /** Live events a client watch may have waiting before it is ended as too slow. */
  watcherBufferSize: number
  /** How long a read waits for the cache to reach its resourceVersion (upstream's 3 s blockTimeout). */
  freshnessTimeoutMs: number
  /** Interval of the backend BOOKMARKs the cache asks for while a read waits. */
  progressIntervalMs: number
  /** Pause before loading again after the backend failed. */
  retryDelayMs: number
  /** Default interval of BOOKMARKs for client watches that ask for them. */
  bookmarkIntervalMs: number
  logger: Logger
  /** Told, with the cache's prefix, of each client watch ended for being too slow. */
  onWatcherTerminated: (prefix: string) => void
  /** Told of every object a load or a change puts in the cache (see `ObjectObserver`); shared, so that one added later hears too. */
  observers: ReadonlySet<ObjectObserver>
}

/**
 * Told of an object the cache holds from now on: each one a load finds and
 * each one a change writes (a deletion is not told). The object is the
 * cache's own, frozen.
 */
export type ObjectObserver = (object: KubeObject) => void

/** An observer that fails is logged, and the cache goes on. */
export function tellObserver(logger: Logger, observer: ObjectObserver, object: KubeObject, prefix?: string): void {
  try {
    observer(object)
  } catch (err) {
    logger.warn({ ...(prefix ? { prefix } : {}), err: String(err) }, 'an observer of the watch cache failed')
  }
}

/** Upstream's reflector lists in pages of this size (cacher.go `storageWatchListPageSize`). */
const LIST_PAGE_SIZE = 10000

interface FreshnessWaiter {
  revision: number
  resolve: () => void
  timer: ReturnType<typeof setTimeout>
  reject: (err: unknown) => void
}

export class Cacher {
  private objects = new ObjectIndex()
  private readonly window: EventWindow
  /** Every change up to this revision is in `objects`. */
  private revision = 0
  private ready = false
  /** Whether `objects` came from a list at all (a relist may then keep client watches). */
  private listed = false
  private stopped = false
  private readonly readyWaiters: Array<(ready: boolean) => void> = []
  private readonly watchers = new Set<CacheWatcher>()
  private readonly waiters = new Set<FreshnessWaiter>()
  private backendWatch: { watcher: Watcher; progress: boolean } | undefined
  /** Repeats progress requests to a backend watch that takes them, while a read or a watch waits. */
  private progressTimer: ReturnType<typeof setInterval> | undefined
  /** The current backend watch was stopped on purpose, to open one with other options. */
  private reopening = false
  private pause: { timer: ReturnType<typeof setTimeout>; wake: () => void } | undefined
  /** Settles after the first attempt to load, whether it worked or not. */
  readonly firstLoad: Promise<void>
  private firstLoadDone: () => void = () => {}

  constructor(
    readonly prefix: string,
    private readonly backend: Storage,
    private readonly opts: CacherOptions,
    /** The store's current revision for consistent reads, one question shared by the reads that arrive meanwhile. */
    private readonly storeRevision: () => Promise<number> = () => backend.currentRevision(),
  ) {
    this.window = new EventWindow(opts.historySize)
    this.firstLoad = new Promise((resolve) => (this.firstLoadDone = resolve))
    void this.run()
  }

  /** Resolves once the cache holds its first full list (false when stopped first). */
  whenReady(): Promise<boolean> {
    if (this.ready || this.stopped) return Promise.resolve(this.ready)
    return new Promise((resolve) => this.readyWaiters.push(resolve))
  }

  /**
   * Resolves once the cache holds the store's state as of the call: loaded
   * (again, after a lost backend watch) and at the store's revision then.
   * False when stopped, or when the freshness timeout passes first.
   */
  async caughtUp(): Promise<boolean> {
    const revision = await this.storeRevision()
    if (!this.ready && !(await this.whenReady())) return false
    return this.reached(revision)
  }

  /**
   * Serves `resourceVersion` "0", not-older-than and consistent lists
   * (upstream's ConsistentListFromCache) from the cache; exact reads,
   * continuations and pages of a consistent read go to the backend, as
   * upstream's shouldDelegateList decides. A consistent list the cache
   * cannot serve in time goes to the backend too.
   */
  async list(prefix: string, opts: ListOptions): Promise<ListResult> {
    if (!servedFromCache(opts) || (!this.ready && !(await this.loaded()))) return this.backend.list(prefix, opts)
    if (!(await this.freshFor(opts))) return this.backend.list(prefix, opts)
    const copy = !opts.readOnly
    // As upstream, the cache answers with every match: a limit only applies to reads from the backend.
    const matching = this.objects.matching(prefix, opts.predicate)
    return { items: copy ? matching.map((obj) => cloneJson(obj)) : matching, revision: this.revision }
  }

  /** Tells `observer` of every object the cache holds now (none before its first load). */
  tellHeld(observer: ObjectObserver): void {
    if (this.ready) for (const object of this.objects.values()) this.tell(observer, object)
  }

  private tell(observer: ObjectObserver, object: KubeObject): void {
    tellObserver(this.opts.logger, observer, object, this.prefix)
  }

  /** The cached object at `key` once the cache is loaded (frozen: the cache's own), else undefined. */
  cached(key: string): KubeObject | undefined {
    return this.ready ? this.objects.get(key) : undefined
  }

  /**
   * One object from the cache, for every read but an exact one: a consistent
   * read once the cache holds every change the store had when the read
   * arrived, otherwise once it reached the resourceVersion asked for. A
   * consistent get the server makes for itself (not `readOnly`: a check
   * inside a write) reads the store, one round trip, rather than wait for
   * the cache to hear of writes to other resources.
   */
  async get(key: string, opts: ReadOptions): Promise<KubeObject | undefined> {
    const consistent = opts.resourceVersion === undefined || opts.resourceVersion === ''
    if (opts.resourceVersionMatch === 'Exact' || (consistent && !opts.readOnly)) return this.backend.get(key, opts)
    if ((!this.ready && !(await this.loaded())) || !(await this.freshFor(opts))) return this.backend.get(key, opts)
    const obj = this.objects.get(key)
    return obj && !opts.readOnly ? cloneJson(obj) : obj
  }

  /**
   * Whether the cache holds a full list, waiting for its first load while
   * that is under way (callers ask only when not ready: no await on a read
   * of a loaded cache): start-up's own readers (informers, the bootstrap
   * hooks), which run while the caches load, then read each object once
   * from the cache rather than again from the backend beside it. After a
   * first load that failed, and while a later one runs, reads go to the
   * backend (no client reaches the server before its caches loaded once).
   */
  private async loaded(): Promise<boolean> {
    if (!this.ready && !this.stopped) await this.firstLoad
    return this.ready
  }

  /**
   * Waits until the cache may answer a read with these options: false when
   * it should go to the backend (a consistent read the cache did not catch
   * up with in time, a resourceVersion that is not a number).
   */
  private async freshFor(opts: ReadOptions): Promise<boolean> {
    const rv = opts.resourceVersion
    if (rv === '0') return true
    if (rv === undefined || rv === '') {
      const revision = await this.storeRevision()
      return this.ready && (await this.reached(revision))
    }
    const wanted = parseRevision(rv)
    if (wanted === undefined) return false
    await this.waitUntilFresh(wanted, rv)
    return true
  }

  /**
   * Without a resourceVersion the watch needs the latest state, which only
   * the backend has for sure: it goes there, as in upstream. From "0" it
   * starts with the cached objects; from a revision inside the window it
   * replays the window; from an older one the backend serves it, or fails it
   * with "too old resource version".
   */
  watch(target: string, opts: WatchOptions): Watcher {
    const rv = opts.resourceVersion
    const from = rv === undefined || rv === '' ? undefined : parseRevision(rv)
    // A resourceVersion that is no number is the backend's to refuse (InvalidResourceVersion), not a watch from now.
    if (this.stopped || (from === undefined && resourceVersionSyntaxError(rv))) return this.backend.watch(target, opts)
    if (from === undefined) {
      // No resourceVersion: served from the cache too, as upstream does by default, once the cache
      // has caught up with the store's current revision, so the initial state is a consistent one.
      const started = this.whenReady().then(async (ready) => {
        // Stopped after it became ready, before this ran (the answers that did both came together): the watch ends.
        if (!ready || this.stopped) return undefined
        try {
          await this.waitUntilFresh(await this.backend.currentRevision())
        } catch (err) {
          if (this.stopped) return undefined
          throw err
        }
        // The cache may have stopped meanwhile: the watch ends with it.
        return this.stopped ? undefined : this.startWatch(target, 0, opts)
      })
      return new PendingWatcher(started, opts.signal)
    }
    if (this.ready) return this.startWatch(target, from, opts)
    const started = this.whenReady().then((ready) => (ready ? this.startWatch(target, from, opts) : undefined))
    return new PendingWatcher(started, opts.signal)
  }

  /** Forgets cached changes up to `revision`, so watches from there go to the backend (after its compaction). */
  compact(revision: number): void {
    this.window.forgetUpTo(revision)
  }

  /** Ends the backend watch and every client watch; reads go to the backend from now on. */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.ready = false
    this.backendWatch?.watcher.stop()
    if (this.progressTimer !== undefined) clearInterval(this.progressTimer)
    this.progressTimer = undefined
    for (const w of [...this.watchers]) w.end()
    for (const waiter of [...this.waiters]) {
      clearTimeout(waiter.timer)
      waiter.reject(new StorageError('Unavailable', this.prefix, 'the watch cache is stopping'))
    }
    this.waiters.clear()
    for (const resolve of this.readyWaiters.splice(0)) resolve(false)
    this.firstLoadDone()
    if (this.pause) {
      clearTimeout(this.pause.timer)
      this.pause.wake()
    }
  }

  // --- serving -----------------------------------------------------------------

  private startWatch(target: string, from: number, opts: WatchOptions): Watcher {
    let backlog: Backlog
    if (from === 0) backlog = { objects: this.objects.matching(target) }
    else if (from < this.window.oldestStart()) return this.backend.watch(target, opts)
    else backlog = { changes: this.window.since(from) }
    const matchesKey = target.endsWith('/') ? (key: string) => key.startsWith(target) : (key: string) => key === target
    const watcher: CacheWatcher = new CacheWatcher({
      matchesKey,
      predicate: opts.predicate,
      after: from === 0 ? this.revision : from,
      backlog,
      capacity: this.opts.watcherBufferSize,
      release: () => this.watchers.delete(watcher),
      onTerminated: () => this.opts.onWatcherTerminated(this.prefix),
      readOnly: opts.readOnly === true,
    })
    this.watchers.add(watcher)
    if (opts.bookmarks) {
      watcher.startBookmarks(opts.bookmarkIntervalMs ?? this.opts.bookmarkIntervalMs, () => this.revision)
      // Its BOOKMARKs may not go back before its resourceVersion: the cache must get there first.
      if (watcher.awaitsBookmark(this.revision)) this.askForProgress()
    }
    if (opts.signal) watcher.stopOn(opts.signal)
    return watcher
  }

  /**
   * Waits until the cache has seen `revision` (upstream's
   * waitUntilFreshAndBlock): a revision the backend has not reached yet is
   * refused at once, one the cache is merely behind on gets the freshness
   * timeout, then TooLargeResourceVersion so the client retries.
   */
  private async waitUntilFresh(revision: number, asked: number | string = revision): Promise<void> {
    if (revision <= this.revision) return
    const current = await this.backend.currentRevision()
    if (revision > current) throw tooLarge(this.prefix, asked, current)
    if (!(await this.reached(revision))) throw tooLarge(this.prefix, asked, this.revision)
  }

  /** Resolves true once the cache has seen `revision`, false after the freshness timeout. */
  private reached(revision: number): Promise<boolean> {
    if (revision <= this.revision) return Promise.resolve(true)
    return new Promise<boolean>((resolve, reject) => {
      const waiter: FreshnessWaiter = {
        revision,
        resolve: () => resolve(true),
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter)
          resolve(false)
        }, this.opts.freshnessTimeoutMs),
      }
      this.waiters.add(waiter)
      this.askForProgress()
    })
  }

  /**
   * Someone needs the cache to reach a revision this resource may never see
   * a change at: the backend's BOOKMARKs move it on (upstream's progress requests).
   */
  private askForProgress(): void {
    const backendWatch = this.backendWatch
    if (!backendWatch) return
    if (!backendWatch.watcher.requestProgress) {
      if (!backendWatch.progress) this.reopen()
      return
    }
    // The backend watch answers on request: ask now, and again each interval while someone still waits.
    backendWatch.watcher.requestProgress()
    if (this.progressTimer === undefined) {
      this.progressTimer = setInterval(() => {
        if (!this.needsProgress() || this.stopped) {
          clearInterval(this.progressTimer)
          this.progressTimer = undefined
          return
        }
        this.backendWatch?.watcher.requestProgress?.()
      }, this.opts.progressIntervalMs)
    }
  }

  /** A read waits for freshness, or a client watch for its first BOOKMARK. */
  private needsProgress(): boolean {
    if (this.waiters.size > 0) return true
    for (const w of this.watchers) if (w.awaitsBookmark(this.revision)) return true
    return false
  }

  private settleWaiters(): void {
    for (const waiter of this.waiters) {
      if (waiter.revision > this.revision) continue
      clearTimeout(waiter.timer)
      this.waiters.delete(waiter)
      waiter.resolve()
    }
  }

  // --- following the backend (upstream's reflector) --------------------------

  private async run(): Promise<void> {
    let mustList = true
    while (!this.stopped) {
      try {
        if (mustList) {
          await this.relist().finally(this.firstLoadDone)
          mustList = false
        }
        const idle = await this.follow()
        // A backend that keeps ending watches at once must not make this spin.
        if (idle) await this.sleep()
      } catch (err) {
        if (this.stopped) return
        this.ready = false
        mustList = true
        this.opts.logger.warn({ prefix: this.prefix, err: String(err) }, 'watch cache lost the backend; loading again')
        // Only a compacted revision can be recovered from at once, by listing.
        if (!(err instanceof StorageError && err.code === 'Compacted')) await this.sleep()
      }
    }
  }

  /**
   * Loads the whole resource at one revision. Client watches survive when
   * nothing changed meanwhile (no change of theirs was missed); otherwise
   * they end, as upstream ends them, and their clients re-watch or relist.
   */
  private async relist(): Promise<void> {
    const fresh = new ObjectIndex()
    let revision: number | undefined
    let token: string | undefined
    do {
      const page = await this.backend.list(this.prefix, { limit: LIST_PAGE_SIZE, readOnly: true, ...(token ? { continue: token } : {}) })
      revision ??= page.revision
      for (const item of page.items) fresh.set(this.keyOf(item), deepFreeze(item))
      token = page.continue
    } while (token && !this.stopped)
    if (this.stopped || revision === undefined) return
    if (!this.listed || !fresh.sameAs(this.objects)) for (const w of [...this.watchers]) w.end()
    this.objects = fresh
    this.window.reset(revision)
    this.revision = revision
    this.listed = true
    this.ready = true
    for (const observer of this.opts.observers) this.tellHeld(observer)
    for (const resolve of this.readyWaiters.splice(0)) resolve(true)
    this.settleWaiters()
  }

  /**
   * Applies the backend's changes until its watch ends. Returns true when it
   * ended on its own without delivering anything.
   */
  private async follow(): Promise<boolean> {
    const progress = this.needsProgress()
    // The cache freezes and keeps each event's object, never changing it: a store may hand over its own.
    const watcher = this.backend.watch(this.prefix, {
      resourceVersion: String(this.revision),
      readOnly: true,
      ...(progress ? { bookmarks: true, bookmarkIntervalMs: this.opts.progressIntervalMs } : {}),
    })
    this.backendWatch = { watcher, progress }
    this.reopening = false
    const events = watcher[Symbol.asyncIterator]()
    let delivered = 0
    try {
      for (;;) {
        const next = await events.next()
        if (next.done || this.stopped) return !this.reopening && delivered === 0
        delivered++
        this.apply(next.value)
      }
    } finally {
      watcher.stop()
      this.backendWatch = undefined
    }
  }

  /** Replaces the backend watch with one from the current revision (the options are chosen anew). */
  private reopen(): void {
    if (!this.backendWatch || this.reopening) return
    this.reopening = true
    this.backendWatch.watcher.stop()
  }

  private apply(event: StorageEvent): void {
    if (event.type === 'BOOKMARK') {
      if (event.revision > this.revision) {
        this.revision = event.revision
        this.settleWaiters()
      }
      // Nobody waits any more: back to a watch without the backend's BOOKMARKs.
      if (this.backendWatch?.progress && !this.needsProgress()) this.reopen()
      return
    }
    if (event.revision <= this.revision) return
    const object = deepFreeze(event.object)
    const key = this.keyOf(object)
    const previous = this.objects.get(key)
    const deleted = event.type === 'DELETED'
    if (deleted) this.objects.delete(key)
    else this.objects.set(key, object)
    const change: CachedChange = { key, object, previous, deleted, revision: event.revision }
    this.window.push(change)
    this.revision = event.revision
    if (!deleted) for (const observer of this.opts.observers) this.tell(observer, object)
    for (const w of this.watchers) {
      try {
        w.offer(change)
      } catch (err) {
        // A client's selector that throws costs that client its watch, never the cache.
        this.opts.logger.warn({ prefix: this.prefix, err: String(err) }, 'watch cache ended a watch whose filter failed')
        w.end()
      }
    }
    this.settleWaiters()
  }

  /** The key the registry stores an object at (upstream's NamespaceKeyFunc / NoNamespaceKeyFunc). */
  private keyOf(obj: KubeObject): string {
    const ns = obj.metadata.namespace
    return `${this.prefix}${ns ? `${ns}/` : ''}${obj.metadata.name ?? ''}`
  }

  /** The wait before a retry; none once stopped, where a timer would keep the process running for nothing. */
  private sleep(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const wake = () => {
        this.pause = undefined
        resolve()
      }
      this.pause = { timer: setTimeout(wake, this.opts.retryDelayMs), wake }
    })
  }
}

/**
 * upstream's shouldDelegateList (with ConsistentListFromCache), inverted:
 * what the cache may answer. Continuations, exact reads and pages of
 * anything but "0" go to the backend.
 */
function servedFromCache(opts: ListOptions): boolean {
  if (opts.continue || opts.resourceVersionMatch === 'Exact') return false
  return !(opts.limit && opts.limit > 0 && opts.resourceVersion !== '0')
}

/** A revision number, or undefined for text the backend should refuse with its own wording. */
function parseRevision(rv: string | undefined): number | undefined {
  return rv === undefined || rv === '' || resourceVersionSyntaxError(rv) ? undefined : Number(rv)
}

function tooLarge(key: string, wanted: number | string, current: number): StorageError {
  // The registry words it as "Too large resource version: <this message>"; a uint64 past 2^53 to its last digit.
  const shown = typeof wanted === 'string' ? parseGoUint64(wanted).toString() : String(wanted)
  return new StorageError('TooLargeResourceVersion', key, `${shown}, current: ${current}`, current)
}
