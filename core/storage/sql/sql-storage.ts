/**
 * The embedded durable store (docs/architecture.md): the Storage contract over
 * an SQL log table (schema.ts, revision-log.ts) reached through a small
 * synchronous driver port (driver.ts), so it runs on Node (libsql) and Bun
 * (bun:sqlite) alike. Its semantics are memory.ts's: one global revision
 * that every write bumps and that is the objects' resourceVersion, history
 * for exact reads and for paging at a first page's revision, watches that
 * replay from a revision, compaction.
 *
 * Concurrency: the driver is synchronous and the file is locked to this
 * process, so every check-then-write below runs without interleaving; only
 * the caller's `tryUpdate` and `validate` run between awaits, and the write
 * after them re-checks the key's revision and starts over when it moved.
 * Sharing the file with other processes (`shared`, for `--workers`), each
 * check-then-write runs in a transaction that holds the write lock and takes
 * the next revision from the file, consistent reads read at the file's
 * newest revision, and log-follower.ts publishes the others' commits to this
 * process's watchers in revision order.
 *
 * Durability: a write is acknowledged after its INSERT commits to the
 * write-ahead log (schema.ts explains `synchronous`). Alone on the file, the
 * writes of one turn of the event loop commit together (group-commit.ts):
 * their rows, not yet committed, are past the published revision, which
 * every read is bounded by, so no reader sees them before they commit.
 */
import { cloneJson, type KubeObject } from '../../machinery/object.js'
import { jsonCodec, type ObjectCodec } from '../codec.js'
import { CONTINUE_AT_LATEST, decodeContinue, encodeContinue } from '../continue-token.js'
import {
  type ListOptions,
  type ListResult,
  type DeleteOptions,
  type ReadOptions,
  type Storage,
  StorageError,
  type TryUpdate,
  type UpdateOptions,
  type Watcher,
  type WatchOptions,
} from '../interface.js'
import { createOneByOne } from '../create-many.js'
import type { SqlDriver } from './driver.js'
import {
  checkPreconditions,
  compactedRead,
  compactedWatch,
  continueExpired,
  keyExists,
  keyNotFound,
  parseResourceVersion,
  storeClosed,
  tooLarge,
} from '../errors.js'
import { deepFreeze, sameIgnoringResourceVersion, stampRevision } from '../objects.js'
import { type ChangeRow, keyAfter, keyRange, type LogRow, prefixRange, RevisionLog } from './revision-log.js'
import { DEFAULT_SHARED_BUSY_TIMEOUT_MS, LogFollower, type SharedStoreOptions } from './log-follower.js'
import { prepareDatabase, releaseDatabase, type Synchronous, writeTransactionWhenFree } from './schema.js'
import { GroupCommit } from './group-commit.js'
import { nextMacrotask, TimeSlice } from '../../machinery/time-slice.js'
import { type Change, StoreWatcher } from '../store-watcher.js'
import { type DecodedValue, mustWrite, StoredValues } from '../value/stored-values.js'
import { committedObject, copiedForCaller, decodedForWrite, deletedObject } from '../written-object.js'
import { encryptCheckTransformer, type ValueTransformer } from '../value/transformer.js'

export interface SqlStorageOptions {
  /** How objects become stored bytes (`--storage-media-type`). @default jsonCodec */
  codec?: ObjectCodec
  /**
   * The value transformer of each key (encryption at rest): the stored bytes are its output.
   * @default encryptCheckTransformer (values stored as the codec writes them)
   */
  transformerFor?: (key: string) => ValueTransformer
  /** @default 'NORMAL' (see schema.ts: survives kill -9; FULL also survives power loss) */
  synchronous?: Synchronous
  /** Default interval of BOOKMARK events for watches that ask for them. @default 60000 */
  bookmarkIntervalMs?: number
  /**
   * Other processes open the same file (`--workers`): see the file's header.
   * Without it the store holds the file exclusively.
   */
  shared?: SharedStoreOptions
}

const sharedBusyTimeoutMs = (shared: SharedStoreOptions): number => shared.busyTimeoutMs ?? DEFAULT_SHARED_BUSY_TIMEOUT_MS

/** The row a write appends (its key apart). */
interface NewRow {
  revision: number
  createRevision: number
  prevRevision: number
  /** Null for a deletion. */
  value: Uint8Array | null
}

/** Rows read per query while a filtered list fills a page (a predicate may skip many). */
const FILTERED_BATCH = 256
/** Rows a list without a limit, or a watch's start, reads from the log at once. */
const READ_PAGE = 500

export class SqlStorage implements Storage {
  /** Claims the database behind `db` (see schema.ts) and serves it; throws when the file cannot be used. */
  static open(db: SqlDriver, opts: SqlStorageOptions = {}): SqlStorage {
    const shared = opts.shared ? { busyTimeoutMs: sharedBusyTimeoutMs(opts.shared) } : undefined
    const state = prepareDatabase(db, opts.synchronous ?? 'NORMAL', shared)
    return new SqlStorage(db, state.revision, state.compacted, opts)
  }

  private readonly log: RevisionLog
  private readonly codec: ObjectCodec
  private readonly values: StoredValues
  private readonly bookmarkIntervalMs: number
  private readonly watchers = new Set<StoreWatcher>()
  private compactor: ReturnType<typeof setInterval> | undefined
  private closed = false
  /** Sharing the file: publishes the other processes' commits. */
  private readonly follower: LogFollower | undefined
  private readonly onCommit: ((revision: number) => void) | undefined
  /** Sharing the file: how long a write waits for another process's write lock. */
  private readonly busyTimeoutMs: number
  /** This process's writes so far, committed or in the open batch (committedSince). */
  private commits = 0
  /** Alone on the file: the writes of one turn, committed together. */
  private readonly batch: GroupCommit | undefined
  /** Alone on the file: the newest revision handed out to a write (in the open batch, or committed and being published). */
  private appended: number
  /** Alone on the file: the newest revision committed. */
  private durable: number

  private constructor(
    private readonly db: SqlDriver,
    private revision: number,
    /** Reads below this revision and watches from below it fail with Compacted. */
    private compacted: number,
    opts: SqlStorageOptions,
  ) {
    this.log = new RevisionLog(db)
    this.codec = opts.codec ?? jsonCodec
    this.values = new StoredValues(this.codec, opts.transformerFor ?? (() => encryptCheckTransformer))
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60000
    this.onCommit = opts.shared?.onCommit
    this.busyTimeoutMs = opts.shared ? sharedBusyTimeoutMs(opts.shared) : 0
    this.appended = revision
    this.durable = revision
    this.batch = opts.shared
      ? undefined
      : new GroupCommit(
          db,
          (run) => void nextMacrotask().then(run),
          () => (this.durable = this.appended),
          () => (this.appended = this.durable),
        )
    this.follower = opts.shared
      ? new LogFollower(
          {
            published: () => this.revision,
            newestInFile: () => this.log.lastRevision(),
            rowsAfter: (revision, limit) => this.log.rowsAfter(revision, limit),
            changeOf: (row) => this.replayed(row),
            publish: (revision, change) => {
              this.revision = revision
              if (change) this.publish(change)
            },
            unreadable: (err) => {
              for (const w of [...this.watchers]) w.fail(err)
            },
          },
          opts.shared.followIntervalMs,
        )
      : undefined
  }

  /**
   * Another process committed (sharing the file): publish its commits to this
   * process's watchers now rather than at the next look.
   */
  changed(): void {
    if (!this.closed) this.follower?.catchUpQuietly()
  }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    this.ensureOpen(key)
    // A key taken is refused before the object is encoded, which takes milliseconds for one of megabytes.
    this.refuseExisting(key)
    // Encoded (and encrypted) first: the checks and the write below then run without an await between them.
    const { plain, stored } = await this.values.encode(key, obj)
    const written = await decodedForWrite(this.codec, plain)
    this.ensureOpen(key)
    const change = await this.write(
      key,
      () => {
        const newest = this.refuseExisting(key)
        const next = this.nextRevision()
        return { revision: next, createRevision: next, prevRevision: newest?.revision ?? 0, value: stored }
      },
      (revision) => this.writtenChange(key, revision, written, undefined),
    )
    return copiedForCaller(change!.object)
  }

  /**
   * One transaction for all the objects, refused whole when a key is
   * taken. Sharing the file with other workers, one create at a time (each
   * commit is told to the others in revision order).
   */
  async createMany(objects: readonly (readonly [key: string, obj: KubeObject])[]): Promise<number[]> {
    if (this.follower) return createOneByOne(this, objects)
    const encoded: [string, { plain: Uint8Array; stored: Uint8Array }][] = []
    for (const [key, obj] of objects) encoded.push([key, await this.values.encode(key, obj)])
    this.ensureOpen(encoded[0]?.[0] ?? '')
    // Its own transaction: the open batch commits first (publishing its writes, whose revisions come before these).
    this.batch?.flush()
    const first = this.appended + 1
    try {
      this.db.transaction(() =>
        encoded.forEach(([key, { stored }], i) => {
          const newest = this.refuseExisting(key)
          this.log.append(first + i, key, first + i, newest?.revision ?? 0, stored)
        }),
      )
    } catch (err) {
      if (err instanceof StorageError && err.code === 'KeyExists') return objects.map(() => 0)
      throw err
    }
    this.appended = this.durable = first + encoded.length - 1
    this.commits += encoded.length
    encoded.forEach(([key, { plain }], i) => {
      // Nobody watches yet (a start-up template is written before the caches load): no object to make.
      if (this.watchers.size === 0) this.revision = first + i
      else void this.settle(this.writtenChange(key, first + i, this.codec.decode(plain), undefined))
    })
    return encoded.map((_, i) => first + i)
  }

  /** The key's newest row, unless it holds a live object (409). */
  private refuseExisting(key: string): LogRow | undefined {
    const newest = this.log.newest(key)
    if (newest && !newest.deleted) throw keyExists(key, newest.revision)
    return newest
  }

  async get(key: string, opts: ReadOptions = {}): Promise<KubeObject | undefined> {
    this.ensureOpen(key)
    const row = this.log.newestAt(key, this.readRevision(key, opts))
    return row && !row.deleted ? (await this.read(row)).object : undefined
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.ensureOpen(prefix)
    const { revision, startKey } = this.listStart(prefix, opts)
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0
    const predicate = opts.predicate
    const end = prefixRange(prefix).to
    // Without a limit, reads of READ_PAGE rows until the end; with one, a page plus one key
    // (to tell whether more remain), in larger batches when a predicate may skip rows.
    const batch = limit === 0 ? READ_PAGE : predicate ? Math.max(limit + 1, FILTERED_BATCH) : limit + 1
    const items: KubeObject[] = []
    let lastKey: string | undefined
    let more = false
    let from = startKey
    // Rows are decoded in slices, letting other requests run between them: a list of some 20,000 rows (a watch
    // with sendInitialEvents and the watch cache off reads one) held the thread for 300-450 ms in one run.
    const slice = new TimeSlice()
    scan: for (let page = 0; ; page++) {
      // A compaction past the list's revision since the page before may have dropped rows of this one.
      const compacted = page > 0 ? this.compactedAt() : 0
      if (revision < compacted) throw compactedRead(prefix, compacted)
      const rows = this.log.live({ from, to: end }, revision, batch)
      for (const row of rows) {
        await slice.pause()
        // As upstream: a page stops once it holds `limit` matching items, and
        // says "more" only when another object actually exists after it.
        if (limit && items.length >= limit) {
          more = true
          break scan
        }
        lastKey = row.key
        const obj = (await this.read(row)).object
        if (!predicate || predicate(obj)) items.push(obj)
      }
      if (rows.length < batch) break
      from = keyAfter(rows[rows.length - 1]!.key)
    }
    const result: ListResult = { items, revision }
    if (more && lastKey !== undefined) {
      result.continue = encodeContinue(keyAfter(lastKey), prefix, revision)
      // Upstream counts keys, not matches, so it only reports a count without a predicate.
      if (!predicate) result.remainingItemCount = this.log.countLive({ from: keyAfter(lastKey), to: end }, revision)
    }
    return result
  }

  async guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts: UpdateOptions = {}): Promise<KubeObject> {
    for (;;) {
      this.ensureOpen(key)
      const row = this.log.newest(key)
      if (!row || row.deleted) throw keyNotFound(key)
      const commitsAtRead = this.commits
      const read = await this.readOrGuess(row, opts.suggestion)
      const current = read.object
      checkPreconditions(key, current, opts.preconditions)
      const updated = await tryUpdate(await copiedForCaller(current))
      // Upstream skips writes that change nothing, so the resourceVersion stays, unless the value
      // was read with an older provider or key (stale): then it is written again with the current one.
      const unchanged = sameIgnoringResourceVersion(updated, current)
      const next = unchanged && !read.stale ? undefined : await this.values.encode(key, updated)
      const written = next && mustWrite(read, next.plain) ? await decodedForWrite(this.codec, next.plain) : undefined
      this.ensureOpen(key)
      // The row was the key's newest when read: a write that changes nothing answers that state, as upstream's
      // answers a state it read from the store, without looking again. The guess is the caller's (frozen): the answer is a copy.
      if (!next || !written) {
        // A state no client may see before it is committed: the open batch's.
        if (row.revision > this.durable) await this.batch?.committed()
        return read.guessed && !opts.readOnly ? cloneJson(current) : current
      }
      // Someone else wrote (or deleted) meanwhile: start over from their state.
      if (this.committedSince(commitsAtRead) && this.log.newest(key)?.revision !== row.revision) continue
      const change = await this.write(
        key,
        () => {
          // Sharing the file, another process may have written the key since the look above.
          if (this.follower && this.log.newest(key)?.revision !== row.revision) return undefined
          return { revision: this.nextRevision(), createRevision: row.createRevision, prevRevision: row.revision, value: next.stored }
        },
        (revision) => this.writtenChange(key, revision, written, deepFreeze(current)),
      )
      if (change) return opts.readOnly ? change.object : copiedForCaller(change.object)
    }
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    for (;;) {
      this.ensureOpen(key)
      const row = this.log.newest(key)
      if (!row || row.deleted) throw keyNotFound(key)
      const commitsAtRead = this.commits
      const current = guessHolds(row, opts.suggestion) ? opts.suggestion : (await this.read(row)).object
      this.ensureOpen(key)
      // A write during the read: start over from it.
      if (this.committedSince(commitsAtRead) && this.log.newest(key)?.revision !== row.revision) continue
      checkPreconditions(key, current, opts.preconditions)
      if (opts.validate) {
        await opts.validate(await copiedForCaller(current))
        this.ensureOpen(key)
        const now = this.log.newest(key)
        if (!now || now.deleted) throw keyNotFound(key)
        if (now.revision !== row.revision) continue
      }
      const change = await this.write(
        key,
        () => {
          if (this.follower && this.log.newest(key)?.revision !== row.revision) return undefined
          return { revision: this.nextRevision(), createRevision: row.createRevision, prevRevision: row.revision, value: null }
        },
        (revision) => ({ revision, key, object: deletedObject(current, revision), prev: deepFreeze(current), deleted: true }),
      )
      if (change) return copiedForCaller(change.object)
    }
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    const exact = !prefix.endsWith('/')
    const watcher = new StoreWatcher(prefix, opts.predicate, (w) => this.watchers.delete(w), opts)
    watcher.storeRevision = () => this.revision
    const follower = this.follower
    if (follower) {
      // A BOOKMARK on request vouches for the file's newest revision: the other processes' commits are published first.
      const answer = watcher.requestProgress.bind(watcher)
      watcher.requestProgress = () => void follower.catchUp().then(answer, () => {})
    }
    try {
      this.ensureOpen(prefix)
    } catch (err) {
      watcher.fail(err)
      return watcher
    }
    // Stored values are read asynchronously (they may be encrypted): live changes wait behind the start's events.
    watcher.hold()
    this.startWatch(prefix, exact, watcher, opts).then(
      () => watcher.resume(),
      (err: unknown) => watcher.fail(err),
    )
    this.watchers.add(watcher)
    if (opts.bookmarks) watcher.startBookmarks(opts.bookmarkIntervalMs ?? this.bookmarkIntervalMs, () => this.revision)
    if (opts.signal) watcher.stopOn(opts.signal)
    return watcher
  }

  async count(prefix: string): Promise<number> {
    this.ensureOpen(prefix)
    return this.log.countLive(prefixRange(prefix), this.latest())
  }

  async currentRevision(): Promise<number> {
    this.ensureOpen('')
    return this.latest()
  }

  /** The database file's allocated size in bytes, free pages included (as etcd's dbSize counts them). */
  async sizeBytes(): Promise<number> {
    this.ensureOpen('')
    const pages = Number(this.db.prepare('PRAGMA page_count').get()?.['page_count'] ?? 0)
    const pageSize = Number(this.db.prepare('PRAGMA page_size').get()?.['page_size'] ?? 0)
    return pages * pageSize
  }

  /** Ends every watch, stops the compactor and closes the database (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stopCompactor()
    try {
      this.batch?.flush()
    } catch {
      // Its writes were failed with the error; the database closes all the same.
    }
    this.follower?.stop()
    for (const w of [...this.watchers]) w.stop()
    try {
      // A shared file stays in WAL mode for the other processes; the last one to close checkpoints it.
      if (!this.follower) releaseDatabase(this.db)
    } finally {
      this.db.close()
    }
  }

  /**
   * Drops history up to and including `revision` (at most the current one),
   * as etcd's compaction does, keeping each live key's newest row; records
   * the compacted revision durably. Reads, watches and continue tokens below
   * it then fail with Compacted.
   */
  compact(revision: number): void {
    this.ensureOpen('')
    // Its deletions are a transaction of their own, not part of the open batch.
    this.batch?.flush()
    const upTo = Math.min(revision, this.revision)
    if (upTo <= this.compactedAt()) return
    this.log.compact(this.compacted, upTo)
    this.compacted = upTo
  }

  /**
   * Compacts every `intervalMs` (`--kvstore-compaction-interval`; 0 disables),
   * as upstream's compactor does: each run compacts up to the revision the
   * previous run saw, so at least one interval of history is always kept for
   * watches and paged lists to resume from. `onError` hears about failed runs.
   */
  startCompactor(intervalMs: number, onError?: (err: unknown) => void): void {
    this.stopCompactor()
    if (!(intervalMs > 0) || this.closed) return
    let seen = this.revision
    this.compactor = setInterval(() => {
      try {
        this.compact(seen)
      } catch (err) {
        onError?.(err)
      }
      seen = this.revision
    }, intervalMs)
  }

  // --- writes ---------------------------------------------------------------

  /**
   * Runs a write's checks (`check`, which throws to refuse the write, gives
   * the row to append, or undefined when the key moved: start over) and
   * appends the row; resolves with the change (`changeOf` its revision) once
   * committed and published. Alone on the file, the row goes into the open
   * batch, which publishes the change when it commits; sharing it, checks
   * and append run in one transaction holding the write lock, so that the
   * checks hold at the append and the revision taken from the file is the
   * next one.
   */
  private async write(key: string, check: () => NewRow | undefined, changeOf: (revision: number) => Change): Promise<Change | undefined> {
    if (!this.batch) {
      const append = (): number | undefined => {
        const row = check()
        if (row) this.appendRow(key, row)
        return row?.revision
      }
      const revision = await writeTransactionWhenFree(this.db, append, this.busyTimeoutMs, () => this.ensureOpen(key))
      if (revision === undefined) return undefined
      const change = changeOf(revision)
      await this.settle(change)
      return change
    }
    const row = check()
    if (!row) return undefined
    this.appended = row.revision
    return this.batch.add(
      () => this.appendRow(key, row),
      () => {
        const change = changeOf(row.revision)
        this.settle(change)
        return change
      },
    )
  }

  private appendRow(key: string, row: NewRow): void {
    this.commits++
    this.log.append(row.revision, key, row.createRevision, row.prevRevision, row.value)
  }

  /** The revision the write being made gets (inside write()). */
  private nextRevision(): number {
    return (this.follower ? this.log.lastRevision() : this.appended) + 1
  }

  /** The change a create or an update at `revision` made: the stored (frozen) object is the bytes written decoded (decodedForWrite), as a later read returns them. */
  private writtenChange(key: string, revision: number, written: KubeObject, prev: KubeObject | undefined): Change {
    return { revision, key, object: committedObject(written, revision), prev, deleted: false }
  }

  /**
   * Whether the file may have changed since `commits` was read off `this.commits`: sharing it, always (another
   * process may write); alone on it, only when this process committed since (a read of a key's newest row is then
   * still its newest, with no need to ask the file again).
   */
  private committedSince(commits: number): boolean {
    return this.follower !== undefined || this.commits !== commits
  }

  /** Publishes a commit of this process: at once alone on the file, in revision order when sharing it. */
  private settle(change: Change): Promise<void> | undefined {
    if (!this.follower) {
      this.revision = change.revision
      this.publish(change)
      return undefined
    }
    this.onCommit?.(change.revision)
    return this.follower.committed(change)
  }

  private publish(change: Change): void {
    for (const w of this.watchers) w.offer(change)
  }

  private stopCompactor(): void {
    if (this.compactor !== undefined) clearInterval(this.compactor)
    this.compactor = undefined
  }

  // --- reads ----------------------------------------------------------------

  /** A live row's object (stamped with its revision), its codec bytes and whether it was stale. */
  private async read(row: Pick<LogRow, 'key' | 'revision' | 'value'>): Promise<DecodedValue> {
    const decoded = await this.values.decode(row.key, row.value!)
    stampRevision(decoded.object, row.revision)
    return decoded
  }

  /**
   * The key's state for a write: the caller's guess (the watch cache's copy)
   * when it is of the row's revision, which saves decoding the row, else the
   * row decoded. The value is still read through its transformer, so a write
   * that changes nothing is told by its bytes, and a stale value is
   * rewritten, as when the row is decoded.
   */
  private async readOrGuess(row: Pick<LogRow, 'key' | 'revision' | 'value'>, guess: KubeObject | undefined): Promise<DecodedValue & { guessed: boolean }> {
    if (!guessHolds(row, guess)) return { ...(await this.read(row)), guessed: false }
    return { object: guess, ...(await this.values.plain(row.key, row.value!)), guessed: true }
  }

  private async decode(row: Pick<LogRow, 'key' | 'revision' | 'value'>): Promise<KubeObject> {
    return (await this.read(row)).object
  }

  /** The revision a read happens at, per its resourceVersion and match (as memory.ts). */
  private readRevision(key: string, opts: ReadOptions): number {
    const wanted = parseResourceVersion(key, opts.resourceVersion)
    const latest = this.latest()
    if (wanted === undefined) return latest
    if (wanted > latest) throw tooLarge(key, opts.resourceVersion ?? wanted, latest)
    if (opts.resourceVersionMatch !== 'Exact') return latest
    const compacted = this.compactedAt()
    if (wanted < compacted) throw compactedRead(key, compacted)
    return wanted
  }

  /** The newest revision: this process's, or the file's when other processes write into it too. */
  private latest(): number {
    return this.follower ? Math.max(this.revision, this.log.lastRevision()) : this.revision
  }

  /** The compacted revision; sharing the file, as the file records it (another process may have compacted). */
  private compactedAt(): number {
    if (this.follower) this.compacted = Math.max(this.compacted, this.log.compactedRevision())
    return this.compacted
  }

  private listStart(prefix: string, opts: ListOptions): { revision: number; startKey: string } {
    if (!opts.continue) return { revision: this.readRevision(prefix, opts), startKey: prefix }
    const token = decodeContinue(opts.continue, prefix)
    const latest = this.latest()
    if (token.revision === CONTINUE_AT_LATEST) return { revision: latest, startKey: token.startKey }
    const compacted = this.compactedAt()
    if (token.revision < compacted) throw continueExpired(prefix, compacted)
    if (token.revision > latest) throw tooLarge(prefix, token.revision, latest)
    return { revision: token.revision, startKey: token.startKey }
  }

  /**
   * Queues a new watcher's first events and sets the revision its live events must follow. The rows are read
   * a page at a time and the thread is let go between slices: read and decoded in one run, the start of a
   * watch from resourceVersion 0, or from one older than the watch cache's window, over some 20,000 rows held
   * every other request for over a second.
   */
  private async startWatch(prefix: string, exact: boolean, watcher: StoreWatcher, opts: WatchOptions): Promise<void> {
    const range = exact ? keyRange(prefix) : prefixRange(prefix)
    const from = parseResourceVersion(prefix, opts.resourceVersion)
    const slice = new TimeSlice()
    if (from === undefined) {
      // Sharing the file, the current state includes the other processes' commits: publish them first
      // (they reach the held watcher as live changes, and those at or below the snapshot are dropped).
      if (this.follower) await this.follower.publishedUpTo(this.log.lastRevision())
      // ''/'0': the current state as ADDED events, each at its own revision (as etcd3's watcher). Compaction
      // meanwhile keeps every key's newest row up to its point, so later pages still read this revision's state.
      const revision = this.revision
      watcher.afterRevision = revision
      for (let start = range.from; ; ) {
        const rows = this.log.live({ from: start, to: range.to }, revision, READ_PAGE)
        for (const row of rows) {
          // A watch that ended meanwhile (its client went) needs the rest of its start no more.
          if (watcher.ended) return
          const obj = await this.decode(row)
          if (!opts.predicate || opts.predicate(obj)) watcher.enqueue('ADDED', deepFreeze(obj), row.revision)
          await slice.pause()
        }
        if (rows.length < READ_PAGE) return
        start = keyAfter(rows[rows.length - 1]!.key)
      }
    }
    const compacted = this.compactedAt()
    if (from < compacted) throw compactedWatch(prefix, from, compacted)
    watcher.afterRevision = from
    // Rows past the published revision (other processes' commits) reach the watch as live changes, in order.
    const published = this.revision
    for (let after = from; ; ) {
      const rows = this.log.changesAfter(after, range, READ_PAGE)
      // A compaction past `from` between pages may have dropped changes of the next one: the watch ends as too old,
      // as it would have had it come a moment later.
      const compactedNow = this.compactedAt()
      if (from < compactedNow) throw compactedWatch(prefix, from, compactedNow)
      for (const row of rows) {
        if (row.revision > published || watcher.ended) return
        const change = await this.replayed(row)
        if (change) watcher.replay(change)
        await slice.pause()
      }
      if (rows.length < READ_PAGE) return
      after = rows[rows.length - 1]!.revision
    }
  }

  /** A logged row as the Change it was when committed. */
  private async replayed(row: ChangeRow): Promise<Change | undefined> {
    const prev = row.prevValue
      ? deepFreeze(await this.decode({ key: row.key, revision: row.prevRevision, value: row.prevValue }))
      : undefined
    if (!row.deleted) return { revision: row.revision, key: row.key, object: deepFreeze(await this.decode(row)), prev, deleted: false }
    // A deletion row holds no value: the event carries the last state, stamped with the deletion's revision.
    if (!prev) return undefined
    const last = deepFreeze(stampRevision(cloneJson(prev), row.revision))
    return { revision: row.revision, key: row.key, object: last, prev, deleted: true }
  }

  private ensureOpen(key: string): void {
    if (this.closed) throw storeClosed(key, 'the embedded store')
  }
}

/**
 * Whether a caller's guess of a key's state is the stored row's: the same
 * revision. Every copy of a revision is decoded from its one stored value,
 * so the guess then holds exactly what decoding the row would give.
 */
function guessHolds(row: Pick<LogRow, 'revision'>, guess: KubeObject | undefined): guess is KubeObject {
  return guess !== undefined && guess.metadata.resourceVersion === String(row.revision)
}
