/**
 * The in-memory MVCC backend (docs/architecture.md): tests and embedding.
 * It behaves like upstream's etcd3 store: one global revision that every
 * write bumps and that becomes the object's resourceVersion, per-key history
 * so lists can page through the snapshot of their first page, and an event
 * log that watches replay from. History is bounded (`historyLimit` events);
 * reads and watches older than what is kept fail with Compacted, as against
 * a compacted etcd.
 *
 * Stored objects are deep-frozen private copies; callers only ever receive
 * fresh clones, so nothing they do can change what is stored.
 */
import type { KubeObject } from '../resources/object.js'
import { CONTINUE_AT_LATEST, decodeContinue, encodeContinue } from './continue-token.js'
import { checkPreconditions, keyNotFound, parseResourceVersion, tooLarge } from './errors.js'
import { canonicalCopy } from '../encoding/canonical.js'
import { deepFreeze, revisionOf, sameIgnoringResourceVersion, stampRevision } from './objects.js'
import { type Change, StoreWatcher } from './store-watcher.js'
import {
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadOptions,
  type Storage,
  StorageError,
  type TryUpdate,
  type Watcher,
  type WatchOptions,
} from './interface.js'

export interface MemoryStorageOptions {
  /** Events kept for watches (and versions for reads) from old revisions. Default 10000. */
  historyLimit?: number
  /** Default interval of BOOKMARK events for watches that ask for them. Default 60000. */
  bookmarkIntervalMs?: number
}

/** One state of a key; `obj` undefined marks the deletion at `rev`. */
interface Version {
  rev: number
  obj: KubeObject | undefined
}

/** The oldest revision an empty store has; the first write gets 2. */
const INITIAL_REVISION = 1

/** Upstream's wording for an expired continue token (etcd3 store, `continueExpired`). */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.'

export class MemoryStorage implements Storage {
  private revision = INITIAL_REVISION
  /** Reads below this revision and watches from below it fail with Compacted. */
  private compacted = INITIAL_REVISION
  /** Every key with a retained version (live or deleted), sorted, for ordered range scans. */
  private readonly keys: string[] = []
  private readonly history = new Map<string, Version[]>()
  private readonly log = new Queue<Change>()
  private readonly watchers = new Set<StoreWatcher>()
  private readonly historyLimit: number
  private readonly bookmarkIntervalMs: number

  constructor(opts: MemoryStorageOptions = {}) {
    this.historyLimit = Math.max(1, opts.historyLimit ?? 10000)
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60000
  }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    const current = this.latest(key)
    if (current) throw new StorageError('KeyExists', key, `key exists: ${key}`, revisionOf(current))
    return structuredClone(this.commit(key, obj, undefined))
  }

  async get(key: string, opts: ReadOptions = {}): Promise<KubeObject | undefined> {
    const rev = this.readRevision(key, opts)
    const obj = this.readAt(key, rev)
    return obj ? structuredClone(obj) : undefined
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const { rev, startKey } = this.listStart(prefix, opts)
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0
    const predicate = opts.predicate
    const items: KubeObject[] = []
    let lastKey: string | undefined
    let i = lowerBound(this.keys, startKey)
    let more = false
    for (; i < this.keys.length; i++) {
      const key = this.keys[i]!
      if (!key.startsWith(prefix)) break
      const obj = this.readAt(key, rev)
      if (!obj) continue
      // As upstream: a page stops once it holds `limit` matching items, and
      // says "more" only when another key actually exists after it.
      if (limit && items.length >= limit) {
        more = true
        break
      }
      lastKey = key
      if (predicate && !predicate(obj)) continue
      items.push(structuredClone(obj))
    }
    const result: ListResult = { items, revision: rev }
    if (more && lastKey !== undefined) {
      result.continue = encodeContinue(`${lastKey}\u0000`, prefix, rev)
      // Upstream counts keys, not matches, so it only reports a count without a predicate.
      if (!predicate) result.remainingItemCount = this.countFrom(i, prefix, rev)
    }
    return result
  }

  async guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts: { preconditions?: Preconditions } = {}): Promise<KubeObject> {
    for (;;) {
      const current = this.latest(key)
      if (!current) throw keyNotFound(key)
      checkPreconditions(key, current, opts.preconditions)
      const seen = revisionOf(current)
      const updated = await tryUpdate(structuredClone(current))
      const now = this.latest(key)
      // Someone else wrote (or deleted) while tryUpdate ran: start over from their state.
      if (!now || revisionOf(now) !== seen) continue
      // Upstream skips writes that change nothing, so the resourceVersion stays.
      if (sameIgnoringResourceVersion(updated, current)) return structuredClone(current)
      return structuredClone(this.commit(key, updated, current))
    }
  }

  async delete(
    key: string,
    opts: { preconditions?: Preconditions; validate?: (current: KubeObject) => void | Promise<void> } = {},
  ): Promise<KubeObject> {
    for (;;) {
      const current = this.latest(key)
      if (!current) throw keyNotFound(key)
      checkPreconditions(key, current, opts.preconditions)
      const seen = revisionOf(current)
      if (opts.validate) {
        await opts.validate(structuredClone(current))
        const now = this.latest(key)
        if (!now) throw keyNotFound(key)
        if (revisionOf(now) !== seen) continue
      }
      return structuredClone(this.commitDelete(key, current))
    }
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    const matchesKey = prefix.endsWith('/') ? (key: string) => key.startsWith(prefix) : (key: string) => key === prefix
    const watcher = new StoreWatcher(matchesKey, opts.predicate, (w) => this.watchers.delete(w), opts)
    try {
      this.watchStart(prefix, matchesKey, watcher, opts)
    } catch (err) {
      watcher.fail(err)
      return watcher
    }
    this.watchers.add(watcher)
    if (opts.bookmarks) watcher.startBookmarks(opts.bookmarkIntervalMs ?? this.bookmarkIntervalMs, () => this.revision)
    if (opts.signal) watcher.stopOn(opts.signal)
    return watcher
  }

  async count(prefix: string): Promise<number> {
    return this.countFrom(lowerBound(this.keys, prefix), prefix, this.revision)
  }

  async currentRevision(): Promise<number> {
    return this.revision
  }

  async close(): Promise<void> {
    for (const w of [...this.watchers]) w.stop()
  }

  /**
   * Drops history up to and including `revision`, as etcd's compaction does:
   * reads at older revisions and watches from older revisions then fail with
   * Compacted. The size limit calls this on its own; tests call it directly.
   */
  compact(revision: number): void {
    const upTo = Math.min(revision, this.revision)
    if (upTo <= this.compacted) return
    this.compacted = upTo
    const touched = new Set<string>()
    for (let e = this.log.peek(); e && e.revision <= upTo; e = this.log.peek()) {
      this.log.shift()
      touched.add(e.key)
    }
    for (const key of touched) this.pruneKey(key)
  }

  // --- writes ---------------------------------------------------------------

  /** Stores `obj` as the next revision of `key` and tells the watchers. */
  private commit(key: string, obj: KubeObject, prev: KubeObject | undefined): KubeObject {
    const rev = this.revision + 1
    // Kept in the order Go writes it, so reads are encoded by the engine's JSON.stringify (encoding/canonical.ts).
    const stored = stampRevision(canonicalCopy(obj), rev)
    deepFreeze(stored)
    this.revision = rev
    this.append(key, { rev, obj: stored })
    this.publish({ revision: rev, key, object: stored, prev, deleted: false })
    return stored
  }

  private commitDelete(key: string, current: KubeObject): KubeObject {
    const rev = this.revision + 1
    const last = stampRevision(structuredClone(current), rev)
    deepFreeze(last)
    this.revision = rev
    this.append(key, { rev, obj: undefined })
    this.publish({ revision: rev, key, object: last, prev: current, deleted: true })
    return last
  }

  private append(key: string, version: Version): void {
    const versions = this.history.get(key)
    if (versions) {
      versions.push(version)
      return
    }
    this.history.set(key, [version])
    // Insertion is a binary search plus one splice: no copy of the key array.
    this.keys.splice(lowerBound(this.keys, key), 0, key)
  }

  private publish(event: Change): void {
    this.log.push(event)
    for (const w of this.watchers) w.offer(event)
    if (this.log.length > this.historyLimit) {
      const oldest = this.log.at(this.log.length - this.historyLimit - 1)
      if (oldest) this.compact(oldest.revision)
    }
  }

  /** Forgets versions of `key` that no read at or after the compacted revision can see. */
  private pruneKey(key: string): void {
    const versions = this.history.get(key)
    if (!versions) return
    let drop = 0
    while (drop + 1 < versions.length && versions[drop + 1]!.rev <= this.compacted) drop++
    if (drop > 0) versions.splice(0, drop)
    const only = versions[0]
    if (versions.length === 1 && only && !only.obj && only.rev <= this.compacted) {
      this.history.delete(key)
      const at = lowerBound(this.keys, key)
      if (this.keys[at] === key) this.keys.splice(at, 1)
    }
  }

  // --- reads ----------------------------------------------------------------

  private latest(key: string): KubeObject | undefined {
    const versions = this.history.get(key)
    return versions?.[versions.length - 1]?.obj
  }

  /** The state of `key` at revision `rev` (frozen; clone before handing out). */
  private readAt(key: string, rev: number): KubeObject | undefined {
    const versions = this.history.get(key)
    if (!versions) return undefined
    // Reads are nearly always at or close to the head, so scan from the end.
    for (let i = versions.length - 1; i >= 0; i--) {
      const v = versions[i]!
      if (v.rev <= rev) return v.obj
    }
    return undefined
  }

  private countFrom(index: number, prefix: string, rev: number): number {
    let n = 0
    for (let i = index; i < this.keys.length; i++) {
      const key = this.keys[i]!
      if (!key.startsWith(prefix)) break
      if (this.readAt(key, rev)) n++
    }
    return n
  }

  /** The revision a get reads at, per its resourceVersion and match. */
  private readRevision(key: string, opts: ReadOptions): number {
    const wanted = parseResourceVersion(key, opts.resourceVersion)
    if (wanted === undefined) return this.revision
    if (wanted > this.revision) throw tooLarge(key, wanted, this.revision)
    if (opts.resourceVersionMatch !== 'Exact') return this.revision
    if (wanted < this.compacted) {
      throw new StorageError('Compacted', key, 'The resourceVersion for the provided list is too old.', this.compacted)
    }
    return wanted
  }

  private listStart(prefix: string, opts: ListOptions): { rev: number; startKey: string } {
    if (!opts.continue) return { rev: this.readRevision(prefix, opts), startKey: prefix }
    const token = decodeContinue(opts.continue, prefix)
    if (token.revision === CONTINUE_AT_LATEST) return { rev: this.revision, startKey: token.startKey }
    if (token.revision < this.compacted) throw new StorageError('Compacted', prefix, CONTINUE_EXPIRED, this.compacted)
    if (token.revision > this.revision) throw tooLarge(prefix, token.revision, this.revision)
    return { rev: token.revision, startKey: token.startKey }
  }

  /** Queues a new watcher's first events and sets the revision its live events must follow. */
  private watchStart(prefix: string, matchesKey: (key: string) => boolean, watcher: StoreWatcher, opts: WatchOptions): void {
    const from = parseResourceVersion(prefix, opts.resourceVersion)
    if (from === undefined) {
      watcher.afterRevision = this.revision
      // ''/'0': the current state as ADDED events, each at its own revision (as etcd3's watcher).
      const keys = prefix.endsWith('/') ? this.keysUnder(prefix) : [prefix]
      for (const key of keys) {
        const obj = this.latest(key)
        if (obj && matchesKey(key) && (!opts.predicate || opts.predicate(obj))) {
          watcher.enqueue('ADDED', obj, revisionOf(obj))
        }
      }
      return
    }
    if (from < this.compacted) {
      throw new StorageError(
        'Compacted',
        prefix,
        `too old resource version: ${from} (${this.compacted})`,
        this.compacted,
      )
    }
    watcher.afterRevision = from
    for (let i = this.log.firstIndexAfter(from); i < this.log.length; i++) watcher.offer(this.log.at(i)!)
  }

  private *keysUnder(prefix: string): Generator<string> {
    for (let i = lowerBound(this.keys, prefix); i < this.keys.length; i++) {
      const key = this.keys[i]!
      if (!key.startsWith(prefix)) return
      yield key
    }
  }
}

/** A FIFO with O(1) shift that compacts its backing array now and then. */
class Queue<T> {
  private items: T[] = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head++]
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** The item `i` places after the head. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.length ? this.items[this.head + i] : undefined
  }

  clear(): void {
    this.items = []
    this.head = 0
  }

  /** For a queue of events in revision order: the index of the first with rev > `rev`. */
  firstIndexAfter(this: Queue<Change>, rev: number): number {
    let lo = 0
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.at(mid)!.revision <= rev) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

// --- helpers ------------------------------------------------------------------

/** The first index whose key is >= `target` (UTF-16 order; equals etcd's byte order for ASCII keys). */
function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid]! < target) lo = mid + 1
    else hi = mid
  }
  return lo
}

