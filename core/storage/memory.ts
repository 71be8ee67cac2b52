/**
 * The in-memory MVCC backend (docs/architecture.md): tests and embedding.
 * It behaves like upstream's etcd3 store: one global revision that every
 * write bumps and that becomes the object's resourceVersion, per-key history
 * so lists can page through the snapshot of their first page, and an event
 * log that watches replay from. History is bounded (`historyLimit` events);
 * reads and watches older than what is kept fail with Compacted, as against
 * a compacted etcd.
 *
 * Stored objects are deep-frozen private copies; callers receive fresh
 * clones (or, reading read-only, the frozen objects themselves), so nothing
 * they do can change what is stored.
 *
 * With `transformerFor` (encryption at rest) the store holds no objects:
 * every version, and every logged change, is kept as the bytes the key's
 * transformer wrote (JSON through it), and read back through it, so what
 * memory holds is what etcd would hold.
 */
import { cloneJson, type KubeObject } from '../machinery/object.js'
import { CONTINUE_AT_LATEST, decodeContinue, encodeContinue } from './continue-token.js'
import { checkPreconditions, keyNotFound, parseResourceVersion, refuseOversizedValue, tooLarge, withoutStack } from './errors.js'
import { canonicalCopy } from '../encoding/canonical.js'
import { deepFreeze, sameIgnoringResourceVersion, stampRevision } from './objects.js'
import { type Change, StoreWatcher } from './store-watcher.js'
import { jsonCodec } from './codec.js'
import { Queue } from './memory-log.js'
import { lowerBound, SortedKeys } from './sorted-keys.js'
import { type DecodedValue, mustWrite, StoredValues } from './value/stored-values.js'
import { committedObject, copiedForCaller, copiedForWrite, decodedForWrite, deletedObject, jsonSizeOf } from './written-object.js'
import type { ValueTransformer } from './value/transformer.js'
import {
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadOptions,
  type Storage,
  StorageError,
  type TryUpdate,
  type UpdateOptions,
  type Watcher,
  type WatchOptions,
} from './interface.js'

export interface MemoryStorageOptions {
  /** Events kept for watches (and versions for reads) from old revisions. Default 10000. */
  historyLimit?: number
  /** Default interval of BOOKMARK events for watches that ask for them. Default 60000. */
  bookmarkIntervalMs?: number
  /** Each key's value transformer: when given, values are held only as its output. */
  transformerFor?: (key: string) => ValueTransformer
}

/** A held value: the frozen object, or the transformer's bytes of it. */
type Held = KubeObject | Uint8Array

/** One state of a key; `obj` undefined marks the deletion at `rev`. */
interface Version {
  rev: number
  obj: Held | undefined
}

/** A version that holds a value. */
type LiveVersion = Version & { obj: Held }

/** A change as the log keeps it for replays: as delivered, or (transformed values) as bytes. */
type Logged = Change | SealedChange

interface SealedChange {
  sealed: true
  revision: number
  key: string
  deleted: boolean
  /** The new value's bytes; undefined for a deletion (its event shows the previous state). */
  object: Uint8Array | undefined
  prev: Uint8Array | undefined
  prevRevision: number
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
  /** Every key with a retained version (live or deleted), for ordered range scans. */
  private readonly keys = new SortedKeys()
  private readonly history = new Map<string, Version[]>()
  private readonly log = new Queue<Logged>()
  private readonly watchers = new Set<StoreWatcher>()
  private readonly historyLimit: number
  private readonly bookmarkIntervalMs: number
  private readonly values: StoredValues | undefined

  constructor(opts: MemoryStorageOptions = {}) {
    this.historyLimit = Math.max(1, opts.historyLimit ?? 10000)
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60000
    this.values = opts.transformerFor ? new StoredValues(jsonCodec, opts.transformerFor) : undefined
  }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    // A key taken is refused before the object is copied and transformed (milliseconds for one of megabytes).
    this.refuseExisting(key)
    // Transformed first, so the check and the write below happen without an await between them.
    const sealed = this.values ? await this.values.encode(key, canonicalCopy(obj)) : undefined
    const stored = await this.toStore(key, obj, sealed)
    this.refuseExisting(key)
    return copiedForCaller(this.commit(key, stored, undefined, sealed))
  }

  private refuseExisting(key: string): void {
    const current = this.latest(key)
    if (current) throw new StorageError('KeyExists', key, `key exists: ${key}`, current.rev)
  }

  async get(key: string, opts: ReadOptions = {}): Promise<KubeObject | undefined> {
    const rev = this.readRevision(key, opts)
    const version = this.readAt(key, rev)
    if (!version) return undefined
    if (opts.readOnly && !(version.obj instanceof Uint8Array)) return version.obj
    return (await this.reveal(key, version)).object
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const { rev, startKey } = this.listStart(prefix, opts)
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0
    const predicate = opts.predicate
    // The versions are taken before anything is read (reading transformed values waits), at one revision.
    const found: [string, LiveVersion][] = []
    const keys = this.keys.inOrder()
    for (let i = lowerBound(keys, startKey); i < keys.length; i++) {
      const key = keys[i]!
      if (!key.startsWith(prefix)) break
      const version = this.readAt(key, rev)
      if (version) found.push([key, version])
    }
    const items: KubeObject[] = []
    let lastKey: string | undefined
    let more = false
    let next = 0
    for (; next < found.length; next++) {
      const [key, version] = found[next]!
      // As upstream: a page stops once it holds `limit` matching items, and
      // says "more" only when another key actually exists after it.
      if (limit && items.length >= limit) {
        more = true
        break
      }
      lastKey = key
      if (predicate && !this.values && !predicate(version.obj as KubeObject)) continue
      if (opts.readOnly && !(version.obj instanceof Uint8Array)) {
        items.push(version.obj)
        continue
      }
      const { object } = await this.reveal(key, version)
      if (predicate && this.values && !predicate(object)) continue
      items.push(object)
    }
    const result: ListResult = { items, revision: rev }
    if (more && lastKey !== undefined) {
      result.continue = encodeContinue(`${lastKey}\u0000`, prefix, rev)
      // Upstream counts keys, not matches, so it only reports a count without a predicate.
      if (!predicate) result.remainingItemCount = found.length - next
    }
    return result
  }

  async guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts: UpdateOptions = {}): Promise<KubeObject> {
    for (;;) {
      const version = this.latest(key)
      if (!version) throw keyNotFound(key)
      // Read, never changed: the update works on a copy, and the write keeps this as the change's previous object.
      const read = await this.revealStored(key, version)
      const current = read.object
      if (this.latest(key)?.rev !== version.rev) continue
      checkPreconditions(key, current, opts.preconditions)
      const updated = await tryUpdate(await copiedForCaller(current))
      // Upstream skips writes that change nothing, so the resourceVersion stays, unless the value
      // was read with an older provider or key: then it is written again with the current one.
      const unchanged = sameIgnoringResourceVersion(updated, current)
      const writes = !unchanged || read.stale
      const sealed = writes && this.values ? await this.values.encode(key, canonicalCopy(updated)) : undefined
      const commits = sealed ? mustWrite(read, sealed.plain) : !unchanged
      const stored = commits ? await this.toStore(key, updated, sealed) : undefined
      // Someone else wrote (or deleted) meanwhile: start over from their state.
      if (this.latest(key)?.rev !== version.rev) continue
      // A reader alone gets what is stored (frozen), not a copy.
      const answer = (obj: KubeObject): KubeObject | Promise<KubeObject> => (opts.readOnly ? obj : copiedForCaller(obj))
      if (!stored) return answer(current)
      return answer(this.commit(key, stored, { version, object: current }, sealed))
    }
  }

  async delete(
    key: string,
    opts: { preconditions?: Preconditions; validate?: (current: KubeObject) => void | Promise<void> } = {},
  ): Promise<KubeObject> {
    for (;;) {
      const version = this.latest(key)
      if (!version) throw keyNotFound(key)
      const { object: current } = await this.revealStored(key, version)
      if (this.latest(key)?.rev !== version.rev) continue
      checkPreconditions(key, current, opts.preconditions)
      if (opts.validate) {
        await opts.validate(await copiedForCaller(current))
        const now = this.latest(key)
        if (!now) throw keyNotFound(key)
        if (now.rev !== version.rev) continue
      }
      return copiedForCaller(this.commitDelete(key, version, deepFreeze(current)))
    }
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    const watcher = new StoreWatcher(prefix, opts.predicate, (w) => this.watchers.delete(w), opts)
    watcher.storeRevision = () => this.revision
    try {
      const finish = this.watchStart(prefix, watcher.matchesKey, watcher, opts)
      if (finish) {
        // Transformed values are read asynchronously: live changes wait behind the start's events.
        watcher.hold()
        finish().then(
          () => watcher.resume(),
          (err: unknown) => watcher.fail(err),
        )
      } else watcher.resume()
    } catch (err) {
      watcher.fail(err)
      return watcher
    }
    this.watchers.add(watcher)
    if (opts.bookmarks) watcher.startBookmarks(opts.bookmarkIntervalMs ?? this.bookmarkIntervalMs, () => this.revision)
    if (opts.signal) watcher.stopOn(opts.signal)
    return watcher
  }

  /** What is held for `key` now: its transformer's bytes (with `transformerFor`), the object otherwise, undefined when absent. For tests and tools. */
  heldValue(key: string): Uint8Array | KubeObject | undefined {
    return this.latest(key)?.obj
  }

  async count(prefix: string): Promise<number> {
    return this.countFrom(prefix, this.revision)
  }

  async currentRevision(): Promise<number> {
    return this.revision
  }

  async close(): Promise<void> {
    for (const w of [...this.watchers]) w.stop()
  }

  /**
   * The current state, for `restore` later: every live key's newest version
   * (frozen objects or transformer bytes, shared, never changed) and the
   * revision; with `keep`, only the keys it keeps. Opaque to callers.
   */
  snapshot(keep: (key: string) => boolean = () => true): MemorySnapshot {
    const held: [string, LiveVersion][] = []
    for (const key of this.keys.inOrder()) {
      if (!keep(key)) continue
      const version = this.latest(key)
      if (version) held.push([key, version])
    }
    const snapshot = new MemorySnapshot()
    snapshotState.set(snapshot, { held, revision: this.revision })
    return snapshot
  }

  /**
   * Puts the state of `snapshot` back. Revisions never go backwards: the
   * restored objects keep their resourceVersions, the store's revision moves
   * on by one and everything before it counts as compacted, so a client
   * holding a newer resourceVersion cannot be told a lie. Open watches over
   * a key the restore changes end with Compacted (410 "too old resource
   * version"), as upstream's do after a compaction: their clients list again
   * and see the restored state. The others missed nothing and go on; a
   * progress request (`requestProgress`) moves them to the new revision.
   * So a reset after a test's few writes reloads only the watch caches of
   * what the test wrote.
   */
  restore(snapshot: MemorySnapshot): void {
    const state = snapshotState.get(snapshot)
    if (!state) throw new TypeError('not a snapshot of a MemoryStorage')
    const changed = this.watchers.size ? this.targetsChangedFrom(state.held) : undefined
    const rev = Math.max(this.revision, state.revision) + 1
    this.history.clear()
    this.log.clear()
    for (const [key, version] of state.held) this.history.set(key, [version])
    this.keys.replaceWith(state.held.map(([key]) => key))
    this.revision = rev
    this.compacted = rev
    if (!changed) return
    let ended: StorageError | undefined
    for (const w of [...this.watchers]) {
      // A watch still reading its first events read them from the history just replaced.
      if (!w.starting && !changed.has(w.target)) continue
      // One error for every watch, made only when one is to end; its stack would say nothing and costs.
      ended ??= withoutStack(() => new StorageError('Compacted', '', `too old resource version: the store was restored at revision ${rev}`, rev))
      this.watchers.delete(w)
      w.fail(ended)
    }
  }

  /**
   * What a watch may follow (a key, or a prefix of it ending in `/`) for
   * every key whose live value differs between now and `held` (a
   * snapshot's, in key order): a walk of both sorted lists.
   */
  private targetsChangedFrom(held: readonly (readonly [string, LiveVersion])[]): Set<string> {
    const targets = new Set<string>()
    const add = (key: string): void => {
      targets.add(key)
      // And every prefix of it: a watch follows a resource, a namespace of it, or more.
      for (let slash = key.indexOf('/'); slash >= 0 && slash < key.length - 1; slash = key.indexOf('/', slash + 1)) targets.add(key.slice(0, slash + 1))
    }
    let h = 0
    for (const key of this.keys.inOrder()) {
      while (h < held.length && held[h]![0] < key) add(held[h++]![0])
      const kept = h < held.length && held[h]![0] === key ? held[h++]![1] : undefined
      // Versions are never changed once made: the same one means the same value.
      if (this.latest(key) !== kept) add(key)
    }
    while (h < held.length) add(held[h++]![0])
    return targets
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

  /**
   * The object a write of `obj` stores, made ready before the write: a copy
   * kept in the order Go writes it, so that reads are encoded by the engine's
   * JSON.stringify (encoding/canonical.ts), refused when it is over the
   * store's size limit; or, transformed (and measured so), its bytes decoded.
   */
  private async toStore(key: string, obj: KubeObject, sealed: { plain: Uint8Array } | undefined): Promise<KubeObject> {
    if (sealed) return decodedForWrite(jsonCodec, sealed.plain)
    const size = await jsonSizeOf(obj)
    refuseOversizedValue(key, size)
    return copiedForWrite(obj, size)
  }

  /**
   * Stores `written` (toStore's object; its transformed bytes, `sealed`, when
   * the store has a transformer) as the next revision of `key` and tells the
   * watchers, who get the object either way.
   */
  private commit(
    key: string,
    written: KubeObject,
    prev: { version: LiveVersion; object: KubeObject } | undefined,
    sealed?: { plain: Uint8Array; stored: Uint8Array },
  ): KubeObject {
    const rev = this.revision + 1
    const stored = committedObject(written, rev)
    this.revision = rev
    this.append(key, { rev, obj: sealed ? sealed.stored : stored })
    const change: Change = { revision: rev, key, object: stored, prev: prev && deepFreeze(prev.object), deleted: false }
    this.publish(change, sealed && this.sealedChange(change, sealed.stored, prev?.version))
    return stored
  }

  private commitDelete(key: string, version: LiveVersion, current: KubeObject): KubeObject {
    const rev = this.revision + 1
    const last = deletedObject(current, rev)
    this.revision = rev
    this.append(key, { rev, obj: undefined })
    const change: Change = { revision: rev, key, object: last, prev: current, deleted: true }
    this.publish(change, this.values && this.sealedChange(change, undefined, version))
    return last
  }

  private sealedChange(change: Change, stored: Uint8Array | undefined, prev: LiveVersion | undefined): SealedChange {
    const prevBytes = prev?.obj instanceof Uint8Array ? prev.obj : undefined
    return { sealed: true, revision: change.revision, key: change.key, deleted: change.deleted, object: stored, prev: prevBytes, prevRevision: prev?.rev ?? 0 }
  }

  private append(key: string, version: Version): void {
    const versions = this.history.get(key)
    if (versions) {
      versions.push(version)
      return
    }
    this.history.set(key, [version])
    this.keys.add(key)
  }

  /** Tells the watchers of `event`; the log keeps `logged` (its transformed form) when given. */
  private publish(event: Change, logged: Logged = event): void {
    this.log.push(logged)
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
      this.keys.remove(key)
    }
  }

  // --- reads ----------------------------------------------------------------

  /** The newest version of `key` when it holds a value. */
  private latest(key: string): LiveVersion | undefined {
    const versions = this.history.get(key)
    const newest = versions?.[versions.length - 1]
    return newest?.obj ? (newest as LiveVersion) : undefined
  }

  /** The version of `key` at revision `rev` when it holds a value (frozen; reveal() hands out a copy). */
  private readAt(key: string, rev: number): LiveVersion | undefined {
    const versions = this.history.get(key)
    if (!versions) return undefined
    // Reads are nearly always at or close to the head, so scan from the end.
    for (let i = versions.length - 1; i >= 0; i--) {
      const v = versions[i]!
      if (v.rev <= rev) return v.obj ? (v as LiveVersion) : undefined
    }
    return undefined
  }

  /** A fresh copy of a held value's object, stamped with its revision, and whether its bytes were read as stale. */
  private async reveal(key: string, version: LiveVersion): Promise<Pick<DecodedValue, 'object' | 'plain' | 'stale'>> {
    if (!(version.obj instanceof Uint8Array)) return { object: await copiedForCaller(version.obj), plain: new Uint8Array(0), stale: false }
    return this.decoded(key, version.obj, version.rev)
  }

  /** As `reveal`, but an object kept as it is (deep-frozen) is the store's own, not a copy: for reading alone. */
  private async revealStored(key: string, version: LiveVersion): Promise<Pick<DecodedValue, 'object' | 'plain' | 'stale'>> {
    if (!(version.obj instanceof Uint8Array)) return { object: version.obj, plain: new Uint8Array(0), stale: false }
    return this.decoded(key, version.obj, version.rev)
  }

  private async decoded(key: string, stored: Uint8Array, rev: number): Promise<Pick<DecodedValue, 'object' | 'plain' | 'stale'>> {
    const decoded = await this.values!.decode(key, stored)
    stampRevision(decoded.object, rev)
    return decoded
  }

  /** A logged change as watchers saw it. */
  private async unseal(logged: Logged): Promise<Change> {
    if (!('sealed' in logged)) return logged
    const { key, revision, deleted } = logged
    const prev = logged.prev && deepFreeze((await this.reveal(key, { rev: logged.prevRevision, obj: logged.prev })).object)
    const object = logged.object ? (await this.reveal(key, { rev: revision, obj: logged.object })).object : stampRevision(cloneJson(prev!), revision)
    return { revision, key, object: deepFreeze(object), prev, deleted }
  }

  private countFrom(prefix: string, rev: number): number {
    let n = 0
    const keys = this.keys.inOrder()
    for (let i = lowerBound(keys, prefix); i < keys.length; i++) {
      const key = keys[i]!
      if (!key.startsWith(prefix)) break
      if (this.readAt(key, rev)) n++
    }
    return n
  }

  /** The revision a get reads at, per its resourceVersion and match. */
  private readRevision(key: string, opts: ReadOptions): number {
    const wanted = parseResourceVersion(key, opts.resourceVersion)
    if (wanted === undefined) return this.revision
    if (wanted > this.revision) throw tooLarge(key, opts.resourceVersion ?? wanted, this.revision)
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

  /**
   * Queues a new watcher's first events and sets the revision its live
   * events must follow. With transformed values, what it starts with is
   * taken now and read by the function it returns.
   */
  private watchStart(
    prefix: string,
    matchesKey: (key: string) => boolean,
    watcher: StoreWatcher,
    opts: WatchOptions,
  ): (() => Promise<void>) | undefined {
    const from = parseResourceVersion(prefix, opts.resourceVersion)
    if (from === undefined) {
      watcher.afterRevision = this.revision
      // ''/'0': the current state as ADDED events, each at its own revision (as etcd3's watcher).
      const keys = prefix.endsWith('/') ? this.keysUnder(prefix) : [prefix]
      const found: [string, LiveVersion][] = []
      for (const key of keys) {
        const version = this.latest(key)
        if (version && matchesKey(key)) found.push([key, version])
      }
      const start = async (): Promise<void> => {
        for (const [key, version] of found) {
          if (watcher.ended) return
          const obj = version.obj instanceof Uint8Array ? deepFreeze((await this.reveal(key, version)).object) : version.obj
          if (!opts.predicate || opts.predicate(obj)) watcher.enqueue('ADDED', obj, version.rev)
        }
      }
      if (this.values) return start
      // Without transformed values nothing waits: the events are queued before this returns.
      start().catch((err: unknown) => watcher.fail(err))
      return undefined
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
    if (!this.values) {
      for (let i = this.log.firstIndexAfter(from); i < this.log.length; i++) watcher.offer(this.log.at(i) as Change)
      return undefined
    }
    const logged: Logged[] = []
    for (let i = this.log.firstIndexAfter(from); i < this.log.length; i++) logged.push(this.log.at(i)!)
    return async () => {
      for (const entry of logged) {
        if (watcher.ended) return
        watcher.replay(await this.unseal(entry))
      }
    }
  }

  private *keysUnder(prefix: string): Generator<string> {
    const keys = this.keys.inOrder()
    for (let i = lowerBound(keys, prefix); i < keys.length; i++) {
      const key = keys[i]!
      if (!key.startsWith(prefix)) return
      yield key
    }
  }
}

// --- helpers ------------------------------------------------------------------

/** A MemoryStorage's state at one revision (`snapshot()`), to `restore()` later. Opaque. */
export class MemorySnapshot {
  private readonly brand = 'MemorySnapshot'
}

/** What each snapshot holds, out of the embedder's reach. */
const snapshotState = new WeakMap<MemorySnapshot, { held: readonly [string, LiveVersion][]; revision: number }>()

/** The layout of snapshotText; text of another layout is refused. */
const SNAPSHOT_TEXT_FORMAT = 1

/**
 * A snapshot as JSON text, to be kept beyond the process (start-up
 * templates); undefined when a value it holds is a transformer's bytes,
 * which are kept as they are only in memory.
 */
export function snapshotText(snapshot: MemorySnapshot): string | undefined {
  const state = snapshotState.get(snapshot)
  if (!state) throw new TypeError('not a snapshot of a MemoryStorage')
  if (state.held.some(([, version]) => version.obj instanceof Uint8Array)) return undefined
  return JSON.stringify({ format: SNAPSHOT_TEXT_FORMAT, revision: state.revision, held: state.held.map(([key, version]) => [key, version.rev, version.obj]) })
}

/** A snapshot back from snapshotText's text; throws on text of another layout. */
export function snapshotFromText(text: string): MemorySnapshot {
  const parsed = JSON.parse(text) as { format?: unknown; revision?: unknown; held?: unknown }
  if (parsed.format !== SNAPSHOT_TEXT_FORMAT || !Number.isSafeInteger(parsed.revision) || !Array.isArray(parsed.held)) throw new TypeError('not a snapshot text')
  const held = (parsed.held as unknown[]).map((entry): [string, LiveVersion] => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Number.isSafeInteger(entry[1]) || typeof entry[2] !== 'object' || entry[2] === null) throw new TypeError('not a snapshot text')
    return [entry[0], { rev: entry[1] as number, obj: deepFreeze(entry[2] as KubeObject) }]
  })
  // The store finds keys by binary search: in order whatever the text's order.
  held.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const snapshot = new MemorySnapshot()
  snapshotState.set(snapshot, { held, revision: parsed.revision as number })
  return snapshot
}


