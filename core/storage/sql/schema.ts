/**
 * The embedded store's file: how it is opened and what it holds.
 *
 * One table, `log`, in the manner of k3s's kine: one row per revision (the
 * row id IS the revision), carrying the key, the revision that created the
 * object, the key's previous row, a deletion flag and the encoded object.
 * History for exact reads, paging at a first page's revision and watch
 * replay all come from it. `meta` records the compacted revision.
 *
 * The file is marked with an application id and a format number, so the
 * store never writes into an SQLite file of another program, nor into one a
 * newer version laid out differently.
 */
import { type SqlDriver, sqliteCode } from './driver.js'

/** "kube" in ASCII: marks the file as this store's (`PRAGMA application_id`). */
const APPLICATION_ID = 0x6b756265

/** The oldest revision of an empty store; the first write gets 2, as in memory.ts and etcd. */
export const INITIAL_REVISION = 1

/**
 * `NORMAL` (the store's default): a commit is in the write-ahead log (in the
 * OS page cache) before it returns, so it survives the process dying, kill -9
 * included, but not a power cut or kernel crash. `FULL`: the log is also
 * fsynced at every commit, which survives both at a measured sixth of the
 * create rate (test/storage-contract/sqlite-sync-measure.ts).
 */
export type Synchronous = 'NORMAL' | 'FULL'

/** The file is not one this store may use; the message says why, for the operator. */
export class StoreFileError extends Error {
  override name = 'StoreFileError'
}

/** Each entry moves the file from format `index` to `index + 1`. */
const MIGRATIONS: ReadonlyArray<(db: SqlDriver) => void> = [
  (db) => {
    db.exec(`
      CREATE TABLE log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        value BLOB
      );
      CREATE INDEX log_key ON log (key, id, deleted);
      CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO meta (name, value) VALUES ('compacted', ${INITIAL_REVISION});
      INSERT INTO sqlite_sequence (name, seq) VALUES ('log', ${INITIAL_REVISION});
      PRAGMA application_id = ${APPLICATION_ID};
    `)
  },
]

const FORMAT = MIGRATIONS.length

export interface StoredState {
  /** The newest revision ever written (AUTOINCREMENT remembers it even when compaction removed its row). */
  revision: number
  compacted: number
}

/**
 * Claims the file for this process and brings it to the current format.
 * Throws what the driver throws (locked, not a database, cannot open) or a
 * StoreFileError; in every case before anything is written to a file that is
 * not this store's.
 */
export function prepareDatabase(db: SqlDriver, synchronous: Synchronous, shared?: SharedFile): StoredState {
  if (shared) {
    // Several processes on one file (`--workers`): normal locking, with the
    // WAL index in shared memory (the `-shm` file beside the database), and
    // a wait for the write lock instead of failing at once. A server that
    // holds the file exclusively still keeps every sharer out, and the other way round.
    db.exec('PRAGMA locking_mode = NORMAL')
    db.exec(`PRAGMA busy_timeout = ${Math.max(1, Math.round(shared.busyTimeoutMs))}`)
  } else {
    // Exclusive locking, set before the first read: this process holds the
    // file's lock until it closes, so a second server on the same data fails at
    // start-up, and the WAL index lives in process memory (no -shm file). Being
    // the only writer is also what lets watches be fed in-process after commit.
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('PRAGMA busy_timeout = 0')
  }

  // Look before writing anything (switching to WAL rewrites the file header), in one read
  // transaction: a worker sharing the file may lay it out between two separate looks.
  const format = db.transaction(() => checkFormat(db))

  const journal = db.prepare('PRAGMA journal_mode = WAL').get()?.['journal_mode']
  if (journal !== 'wal') throw new StoreFileError(`write-ahead logging is not available (journal mode ${String(journal)})`)
  db.exec(`PRAGMA synchronous = ${synchronous === 'FULL' ? 'FULL' : 'NORMAL'}`)
  // Writing the format number on every open also takes the write lock now rather than at the first write.
  // Sharing the file, the format is read again under the write lock: another process may have laid it out meanwhile.
  const migrate = (current: number): void => {
    for (let from = current; from < FORMAT; from++) MIGRATIONS[from]!(db)
    db.exec(`PRAGMA user_version = ${FORMAT}`)
  }
  if (shared) {
    writeTransaction(db, () => migrate(checkFormat(db)))
    // From now on a statement waits on the event loop only briefly; a write waits longer without blocking (writeTransactionWhenFree).
    db.exec(`PRAGMA busy_timeout = ${Math.min(BLOCKING_WAIT_MS, Math.max(1, Math.round(shared.busyTimeoutMs)))}`)
  } else db.transaction(() => migrate(format))
  return {
    revision: storedRevision(db),
    compacted: storedCompacted(db),
  }
}

/** How the store shares its file with other processes (`--workers`). */
export interface SharedFile {
  /** How long a write waits for another process's write to finish before it fails. */
  busyTimeoutMs: number
}

/** The file's format number; throws when the file is another program's or a newer version's. */
function checkFormat(db: SqlDriver): number {
  const applicationId = Number(db.prepare('PRAGMA application_id').get()?.['application_id'] ?? 0)
  const format = Number(db.prepare('PRAGMA user_version').get()?.['user_version'] ?? 0)
  if (applicationId === 0) {
    const objects = Number(db.prepare('SELECT count(*) AS n FROM sqlite_master').get()?.['n'] ?? 0)
    if (objects > 0) throw new StoreFileError('it is an SQLite database of another program, not an embedded store')
  } else if (applicationId !== APPLICATION_ID) {
    throw new StoreFileError('it is an SQLite database of another program, not an embedded store')
  }
  if (format > FORMAT) {
    throw new StoreFileError(`it was written by a newer version (format ${format}; this version reads formats up to ${FORMAT})`)
  }
  return format
}

/** The newest revision ever written (AUTOINCREMENT remembers it even when compaction removed its row). */
function storedRevision(db: SqlDriver): number {
  return Number(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'log'").get()?.['seq'] ?? INITIAL_REVISION)
}

/** The revision the history was last compacted at. */
function storedCompacted(db: SqlDriver): number {
  return Number(db.prepare("SELECT value FROM meta WHERE name = 'compacted'").get()?.['value'] ?? INITIAL_REVISION)
}

/**
 * Runs `fn` holding the file's write lock from the start (BEGIN IMMEDIATE),
 * so that what it reads is still true when it writes, whichever process
 * wrote last; rolls back when it throws.
 */
export function writeTransaction<T>(db: SqlDriver, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE')
  return finishTransaction(db, fn)
}

/** Runs `fn` inside the transaction just begun: committed when it returns, rolled back when it throws. */
function finishTransaction<T>(db: SqlDriver, fn: () => T): T {
  let result: T
  try {
    result = fn()
  } catch (err) {
    db.exec('ROLLBACK')
    throw err
  }
  db.exec('COMMIT')
  return result
}

/**
 * How long a statement of a store sharing its file may wait for another
 * process's lock while holding up this process's event loop. Another
 * process's write usually ends well within it (SQLite's busy handler sleeps
 * 1, 2 and 5 ms between tries); a longer one is waited for by
 * writeTransactionWhenFree with timers, while this process serves on.
 */
export const BLOCKING_WAIT_MS = 10

/** The longest pause between two tries for the write lock. */
const MAX_PAUSE_MS = 25

/**
 * writeTransaction for a store sharing its file: while another process
 * holds the write lock, tries again after a pause that doubles up to 25 ms
 * (on timers, so that this process serves meanwhile), until `waitMs` have
 * passed; then the busy error is thrown. `beforeTry` runs before each try
 * (to stop when the store was closed during a pause).
 */
export async function writeTransactionWhenFree<T>(db: SqlDriver, fn: () => T, waitMs: number, beforeTry: () => void): Promise<T> {
  const deadline = Date.now() + waitMs
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    beforeTry()
    try {
      db.exec('BEGIN IMMEDIATE')
      break
    } catch (err) {
      if (sqliteCode(err) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
  return finishTransaction(db, fn)
}

/**
 * Hands the file back before the driver closes: leaving WAL mode checkpoints
 * the log into the database file, and normal locking drops the exclusive lock
 * once the next statement ends. Closing a connection does both, but a driver
 * may keep its connection open until its statement objects are garbage
 * collected (libsql 0.5: tursodatabase/libsql-js#228), and the store would
 * stay locked for the rest of the process.
 */
export function releaseDatabase(db: SqlDriver): void {
  db.exec('PRAGMA journal_mode = DELETE')
  db.exec('PRAGMA locking_mode = NORMAL')
  db.exec('SELECT count(*) FROM sqlite_master')
}
