/**
 * The watch cache (docs/architecture.md; upstream's cacher package): a
 * Storage decorator in front of any backend. Each registered resource prefix
 * gets one Cacher, holding ONE backend watch whose changes fan out to every
 * client watch of that resource; `resourceVersion` "0" and not-older-than
 * lists are answered from memory. Writes, gets, counts and everything under
 * an unregistered prefix pass straight through, so the backend never knows.
 */
import { type Logger, silentLogger } from '../logging/logger.js'
import { extended, type KubeObject } from '../machinery/object.js'
import { Cacher, type ObjectObserver, tellObserver } from './cacher.js'
import { SharedRevision } from './shared-revision.js'
import { commonDirectory, WaitingObjects } from './waiting-objects.js'
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  ReadOptions,
  Storage,
  TryUpdate,
  UpdateOptions,
  Watcher,
  WatchOptions,
} from './interface.js'

export interface WatchCacheOptions {
  /**
   * Changes each resource keeps for watches that resume from a recent
   * resourceVersion; older ones are served by the backend.
   * @default 1024
   */
  historySize?: number
  /**
   * Events a client watch may have waiting; a client that falls further
   * behind has its watch ended, as upstream ends an unresponsive watcher.
   * @default 1000
   */
  watcherBufferSize?: number
  /** How long a read waits for the cache to reach its resourceVersion before 504 "Too large resource version". @default 3000 */
  freshnessTimeoutMs?: number
  /** Interval of the backend BOOKMARKs the cache asks for while a read waits for freshness. @default 100 */
  progressIntervalMs?: number
  /** Pause before the cache loads a resource again after the backend failed. @default 1000 */
  retryDelayMs?: number
  /** Default interval of BOOKMARK events for client watches that ask for them. @default 60000 */
  bookmarkIntervalMs?: number
  /** Where the cache reports losing the backend. @default silent */
  logger?: Logger
  /**
   * Told, with the resource's prefix, of each client watch ended because
   * it fell `watcherBufferSize` events behind (upstream's terminated watchers).
   * @default nothing
   */
  onWatcherTerminated?: (prefix: string) => void
  /**
   * Told of every object a resource's load or a change puts in the cache
   * (`observeObjects`); the set is read at each event, so an observer added
   * later hears from then on. @default none
   */
  observers?: ReadonlySet<ObjectObserver>
  /**
   * Each resource's cache loads with its first read, watch or write rather
   * than at `cacheResource`: a server most of whose resources no one
   * reads (a test's) does not load and follow them all. Meant for a store
   * that keeps its history in memory, whose backend watches answer from
   * any recent revision at once; observers hear of the waiting resources'
   * objects through one watch of the whole store (waiting-objects.ts).
   * @default false
   */
  startOnFirstUse?: boolean
}

/** Upstream's default buffer of a watcher before it is ended as unresponsive. */
export const DEFAULT_WATCHER_BUFFER_SIZE = 1000

export class WatchCache implements Storage {
  private readonly cachers = new Map<string, Cacher>()
  /** Registered prefixes whose cache has not started (`startOnFirstUse`). */
  private readonly waiting = new Set<string>()
  /** Tells observers of the waiting resources' objects while some observer listens. */
  private waitingObjects: WaitingObjects | undefined
  private readonly opts: Required<WatchCacheOptions>
  private stopped = false
  /** One question for the store's revision serves every consistent read that arrives while it is out. */
  private readonly storeRevision: SharedRevision

  constructor(
    readonly backend: Storage,
    opts: WatchCacheOptions = {},
  ) {
    this.opts = {
      historySize: opts.historySize ?? 1024,
      watcherBufferSize: opts.watcherBufferSize ?? DEFAULT_WATCHER_BUFFER_SIZE,
      freshnessTimeoutMs: opts.freshnessTimeoutMs ?? 3000,
      progressIntervalMs: opts.progressIntervalMs ?? 100,
      retryDelayMs: opts.retryDelayMs ?? 1000,
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60000,
      logger: opts.logger ?? silentLogger,
      onWatcherTerminated: opts.onWatcherTerminated ?? (() => {}),
      observers: opts.observers ?? new Set(),
      startOnFirstUse: opts.startOnFirstUse ?? false,
    }
    this.storeRevision = new SharedRevision(() => backend.currentRevision())
  }

  /**
   * Starts caching every key under `prefix`, one resource's prefix as the
   * registry forms it (`/registry/<resource>/`); it loads at once, as
   * upstream's cacher does at start-up, or with its first use
   * (`startOnFirstUse`). Registering a prefix twice is a no-op.
   */
  cacheResource(prefix: string): void {
    if (!prefix.endsWith('/')) throw new Error(`a cached resource prefix ends in "/": ${prefix}`)
    if (this.stopped || this.cachers.has(prefix) || this.waiting.has(prefix)) return
    // One registered while observers listen (a custom resource's) starts at once: their watch of the store may have ended.
    if (this.opts.startOnFirstUse && this.opts.observers.size === 0) this.waiting.add(prefix)
    else this.start(prefix)
  }

  /**
   * Tells `observer` of every object each resource's cache holds now (those
   * not loaded yet tell their observers when they load); of a resource
   * waiting for its first use, of every object stored there.
   */
  tellHeld(observer: ObjectObserver): void {
    for (const cacher of this.cachers.values()) cacher.tellHeld(observer)
    if (this.waiting.size === 0) return
    this.waitingObjects ??= new WaitingObjects(
      this.backend,
      commonDirectory([...this.waiting, ...this.cachers.keys()]),
      this.opts.observers,
      () => this.waiting.size > 0,
      (o, object) => tellObserver(this.opts.logger, o, object),
    )
    void this.waitingObjects.tellHeld(observer).catch((err: unknown) => this.opts.logger.warn({ err: String(err) }, 'cannot tell observers of the stored objects'))
  }

  /** The registered prefixes, loaded or waiting for their first use. */
  cachedResources(): string[] {
    return [...this.cachers.keys(), ...this.waiting]
  }

  private start(prefix: string): Cacher {
    this.waiting.delete(prefix)
    const cacher = new Cacher(prefix, this.backend, this.opts, () => this.storeRevision.current())
    this.cachers.set(prefix, cacher)
    return cacher
  }

  /**
   * Resolves once every registered resource had its first load (those waiting for their first use aside): from then
   * on `resourceVersion=0` reads are answered from memory. A resource whose
   * load failed counts too (it keeps trying; reads go to the backend meanwhile).
   */
  async loaded(): Promise<void> {
    await Promise.all([...this.cachers.values()].map((c) => c.firstLoad))
  }

  /** Resolves once every resource's cache holds the store's state as of the call (cacher.ts `caughtUp`). */
  async caughtUp(): Promise<void> {
    await Promise.all([...this.cachers.values()].map((c) => c.caughtUp()))
  }

  /** A write starts a resource waiting for its first use, so that its cache's changes begin no later than the write's. */
  create(key: string, obj: KubeObject): Promise<KubeObject> {
    this.cacherFor(key)
    return this.backend.create(key, obj)
  }

  /** From the resource's cache when it has one (cacher.ts says when it waits or asks the backend). */
  get(key: string, opts: ReadOptions = {}): Promise<KubeObject | undefined> {
    const cacher = this.cacherFor(key)
    return cacher ? cacher.get(key, opts) : this.backend.get(key, opts)
  }

  list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const cacher = this.cacherFor(prefix)
    return cacher ? cacher.list(prefix, opts) : this.backend.list(prefix, opts)
  }

  /**
   * The cached object goes along as the backend's first guess at the current state (it may skip a read),
   * uncopied: a store copies it only if it runs the update on it, so a store that ignores it costs nothing.
   */
  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: UpdateOptions): Promise<KubeObject> {
    const cached = opts?.suggestion ? undefined : this.cacherFor(key)?.cached(key)
    if (!cached) return this.backend.guaranteedUpdate(key, tryUpdate, opts)
    return this.backend.guaranteedUpdate(key, tryUpdate, extended(opts ?? {}, { suggestion: cached }))
  }

  /**
   * The cached object goes along as the backend's first guess at the state to delete (it may skip a read);
   * a store only reads a delete's guess, so it goes uncopied as an update's does.
   */
  delete(key: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    const cached = opts.suggestion ? undefined : this.cacherFor(key)?.cached(key)
    if (!cached) return this.backend.delete(key, opts)
    return this.backend.delete(key, extended(opts, { suggestion: cached }))
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    const cacher = this.cacherFor(prefix)
    return cacher ? cacher.watch(prefix, opts) : this.backend.watch(prefix, opts)
  }

  count(prefix: string): Promise<number> {
    return this.backend.count(prefix)
  }

  currentRevision(): Promise<number> {
    return this.backend.currentRevision()
  }

  /**
   * Forgets cached changes up to `revision`, to follow a compaction of the
   * backend: watches from there go to the backend, which refuses them as it
   * refuses any watch from a compacted revision.
   */
  compact(revision: number): void {
    for (const cacher of this.cachers.values()) cacher.compact(revision)
  }

  /** Ends the cache's backend watches and its client watches; the backend stays open (it may be someone else's). */
  stop(): void {
    this.stopped = true
    this.waiting.clear()
    this.waitingObjects?.stop()
    for (const cacher of this.cachers.values()) cacher.stop()
  }

  /** Stops the cache and closes the backend. */
  async close(): Promise<void> {
    this.stop()
    await this.backend.close()
  }

  /**
   * The cacher of the resource `target` lies in: the longest registered
   * prefix it starts with, found by looking up each of its leading segments
   * (a key has a handful) rather than testing every resource's prefix. A
   * resource waiting for its first use starts here.
   */
  private cacherFor(target: string): Cacher | undefined {
    let best: Cacher | undefined
    for (let slash = target.indexOf('/', 1); slash >= 0; slash = target.indexOf('/', slash + 1)) {
      const prefix = target.slice(0, slash + 1)
      best = this.cachers.get(prefix) ?? (this.waiting.has(prefix) ? this.start(prefix) : undefined) ?? best
    }
    return best
  }
}
