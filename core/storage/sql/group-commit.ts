/**
 * The embedded store's writes of one turn of the event loop, committed in
 * one transaction (a group commit, as etcd batches its writes).
 *
 * A commit of one INSERT writes every page it touched to the write-ahead
 * log: the log's last leaf, a leaf of the key index, the row counter's page,
 * some 16 KB for an object of 1 kB. Every thousand pages SQLite copies the
 * log back into the file and syncs it, on the thread that committed: a
 * write cost some 130 µs there, half of it that sync, while nothing else
 * ran. The first write of a turn commits at once, as it always did: a
 * writer alone (a client waiting for each answer) waits for no batch. The
 * writes that follow it in the same turn share one transaction and its
 * pages; that batch commits once the turn's other I/O callbacks have run (a
 * macrotask), and each write is acknowledged (its promise resolves) only
 * after that COMMIT, so what a client was told is stored is in the log as
 * before. Right after the COMMIT each write's change is published, in the
 * order they were appended (their revisions' order), before any of them
 * resolves.
 *
 * What runs a transaction of its own, and closing, commits the open batch
 * first (`flush`). A batch whose COMMIT, or one of whose INSERTs, fails is
 * rolled back whole: each of its writes fails with that error, none was
 * acknowledged.
 */
import type { SqlDriver } from './driver.js'

interface Waiting {
  /** Publishes the committed write; what it returns, the write's promise resolves with. */
  publish(): unknown
  resolve(value: unknown): void
  reject(err: unknown): void
}

const nothingToPublish = (): undefined => undefined

export class GroupCommit {
  private readonly waiting: Waiting[] = []
  private open = false
  /** A write was made in this turn of the event loop: the next ones are batched (the turn's end clears it). */
  private writtenThisTurn = false

  /**
   * `later` runs its callback once the current turn's other work is done (a macrotask);
   * `onCommit` is told when a batch committed, `onRollBack` when one was undone (to forget the revisions it handed out).
   */
  constructor(
    private readonly db: SqlDriver,
    private readonly later: (run: () => void) => void,
    private readonly onCommit: () => void,
    private readonly onRollBack: () => void,
  ) {}

  /**
   * Runs `append` (INSERTs only: checks that may refuse the write run before
   * it): the turn's first at once, in a transaction of its own; a later one
   * in the open batch, beginning one when none is. Once its transaction has
   * committed, runs `publish` and resolves with what it returned; rejects
   * when it was rolled back.
   */
  add<T>(append: () => void, publish: () => T): Promise<T> {
    if (!this.writtenThisTurn) return this.alone(append, publish)
    this.begin()
    try {
      append()
    } catch (err) {
      // SQLite may have undone the whole transaction (a full disk, an I/O error): the batch goes with this write.
      this.rollBack(err)
      throw err
    }
    return new Promise<T>((resolve, reject) => this.waiting.push({ publish, resolve: resolve as (value: unknown) => void, reject }))
  }

  /** Resolves once the open batch has committed (at once when none is open); rejects when it was rolled back. */
  committed(): Promise<void> {
    if (!this.open) return Promise.resolve()
    return new Promise((resolve, reject) => this.waiting.push({ publish: nothingToPublish, resolve: () => resolve(), reject }))
  }

  /** The turn's first write: committed by itself at once (its own transaction), and published. */
  private alone<T>(append: () => void, publish: () => T): Promise<T> {
    this.writtenThisTurn = true
    this.later(() => this.endTurn())
    try {
      append()
    } catch (err) {
      this.onRollBack()
      return Promise.reject(err)
    }
    this.onCommit()
    try {
      return Promise.resolve(publish())
    } catch (err) {
      return Promise.reject(err)
    }
  }

  private begin(): void {
    if (this.open) return
    this.db.exec('BEGIN IMMEDIATE')
    this.open = true
  }

  /** The turn's other I/O callbacks have run: its batch commits, and the next turn's first write goes alone again. */
  private endTurn(): void {
    this.writtenThisTurn = false
    try {
      this.flush()
    } catch {
      // The batch's writes were failed with the error; nothing else waits for it.
    }
  }

  /** Commits the open batch now; a no-op when none is open. Throws what COMMIT threw, after failing the batch's writes. */
  flush(): void {
    if (!this.open) return
    try {
      this.db.exec('COMMIT')
    } catch (err) {
      this.rollBack(err)
      throw err
    }
    this.open = false
    this.onCommit()
    const committed = this.waiting.splice(0)
    const published = committed.map((w) => {
      try {
        return { value: w.publish() }
      } catch (err) {
        // Stored all the same: this write's caller hears of the failure, the others are published.
        return { err }
      }
    })
    committed.forEach((w, i) => {
      const outcome = published[i]!
      if ('err' in outcome) w.reject(outcome.err)
      else w.resolve(outcome.value)
    })
  }

  private rollBack(err: unknown): void {
    this.open = false
    try {
      this.db.exec('ROLLBACK')
    } catch {
      // SQLite rolled it back itself already.
    }
    this.onRollBack()
    for (const w of this.waiting.splice(0)) w.reject(err)
  }
}
