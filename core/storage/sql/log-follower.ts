/**
 * The embedded store sharing its file with other processes (`--workers`):
 * every process writes into the one revision log, each write taking the next
 * revision from the file under SQLite's write lock, so revisions are ordered
 * across processes. What a process's watchers see must then be every commit,
 * its own and the others', in revision order. This follower keeps that order:
 * it reads the log after the last revision the process published and
 * publishes each row in turn, when told that another process committed
 * (a nudge), at an interval in case a nudge was lost, and whenever this
 * process's own commit is not the next revision (another's came first).
 *
 * A commit of this process that is next is published at once, exactly as a
 * store alone on its file does; the follower only fills the gaps.
 */
import type { Change } from '../store-watcher.js'
import type { ChangeRow } from './revision-log.js'

/** What the follower needs of the store it feeds. */
export interface FollowedStore {
  /** The revision up to which every commit has been published to this process's watchers. */
  published(): number
  /** The newest revision in the file, whoever wrote it. */
  newestInFile(): number
  /** The file's rows after `revision`, oldest first, at most `limit` of them. */
  rowsAfter(revision: number, limit: number): ChangeRow[]
  /** The change a row records, as watchers see it; undefined for one no watcher can see (a deletion whose previous state was compacted). */
  changeOf(row: ChangeRow): Promise<Change | undefined>
  /** Publishes the commit at `revision` (`change` undefined: nothing to tell, the revision moves on). */
  publish(revision: number, change: Change | undefined): void
  /** A row that cannot be read: the watchers end with the error and start over (the change itself is committed). */
  unreadable(err: unknown): void
}

/** How long a write of a store sharing its file waits for another process's write by default. */
export const DEFAULT_SHARED_BUSY_TIMEOUT_MS = 5000

/** How the store shares its file (SqlStorageOptions.shared). */
export interface SharedStoreOptions {
  /** How long a write waits for another process's write to finish before it fails (on timers after the first 10 ms: the process serves meanwhile). @default 5000 */
  busyTimeoutMs?: number
  /** How often the file is looked at for other processes' commits when no nudge came (see `changed()`). @default 100 */
  followIntervalMs?: number
  /** Told after each commit of this process, so that the others can be nudged to read it. */
  onCommit?: (revision: number) => void
}

/** How often the file is looked at for other processes' commits when no nudge came. */
export const DEFAULT_FOLLOW_INTERVAL_MS = 100

/** Rows the follower reads per query. */
export const FOLLOW_BATCH = 500

export class LogFollower {
  /** This process's commits that wait for earlier ones (of other processes) to be published first. */
  private readonly own = new Map<number, Change>()
  private running: Promise<void> | undefined
  private readonly timer: ReturnType<typeof setInterval>
  private stopped = false

  constructor(
    private readonly store: FollowedStore,
    intervalMs = DEFAULT_FOLLOW_INTERVAL_MS,
  ) {
    this.timer = setInterval(() => {
      if (!this.running && this.store.newestInFile() > this.store.published()) this.catchUpQuietly()
    }, intervalMs)
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /**
   * This process committed `change`: published now when it follows the last
   * published revision, else once the commits before it are (resolves then).
   */
  committed(change: Change): Promise<void> | undefined {
    if (!this.running && change.revision === this.store.published() + 1) {
      this.store.publish(change.revision, change)
      return undefined
    }
    this.own.set(change.revision, change)
    return this.publishedUpTo(change.revision)
  }

  /** Publishes every commit the file holds beyond the last published one; one pass at a time. */
  catchUp(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    this.running ??= this.drain().finally(() => (this.running = undefined))
    return this.running
  }

  /** A catch-up nobody waits for: one that fails (the file busy past the wait) is tried again at the next look or nudge. */
  catchUpQuietly(): void {
    this.catchUp().catch(() => {})
  }

  /** Resolves once every commit up to `revision` is published (or the follower stopped). */
  async publishedUpTo(revision: number): Promise<void> {
    while (!this.stopped && this.store.published() < revision) {
      const before = this.store.published()
      await this.catchUp()
      // Nothing newer could be read yet: look again after other work rather than in a loop that never yields.
      if (this.store.published() === before) await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
    this.own.clear()
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Read first: the rows read next hold every commit up to it (a later statement sees a later state).
      const newest = this.store.newestInFile()
      const rows = this.store.rowsAfter(this.store.published(), FOLLOW_BATCH)
      if (this.stopped) return
      if (rows.length === 0) {
        // Revisions without a row were compacted away (a deletion, or a row a later one replaced): nothing to tell.
        if (newest > this.store.published()) this.store.publish(newest, undefined)
        return
      }
      for (const row of rows) {
        if (this.stopped) return
        // Rows are read once each: the revision they move to is theirs, whatever else happened meanwhile.
        if (row.revision <= this.store.published()) continue
        let change = this.own.get(row.revision)
        this.own.delete(row.revision)
        if (!change) {
          try {
            change = await this.store.changeOf(row)
          } catch (err) {
            this.store.unreadable(err)
            change = undefined
          }
          if (this.stopped) return
        }
        this.store.publish(row.revision, change)
      }
      // Fewer than asked for: that was every row, and a pass that reads again to find none costs two statements
      // more, in each process, after every commit of another (two workers interleaving their writes: every one).
      if (rows.length < FOLLOW_BATCH) {
        if (!this.stopped && newest > this.store.published()) this.store.publish(newest, undefined)
        return
      }
    }
  }
}
