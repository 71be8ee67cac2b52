/**
 * Opening the embedded store, shared by the runtimes' factories: they bring
 * the directory and the driver, this turns every way opening can fail into
 * one message naming the file and the cause, and makes sure a failed open
 * leaves the file exactly as it found it (schema.ts writes nothing into a
 * file it cannot use).
 */
import { type SqlDriver, sqliteCode } from './driver.js'
import { SqlStorage, type SqlStorageOptions } from './sql-storage.js'

export interface EmbeddedStoreOptions extends SqlStorageOptions {
  /** Compaction period (`--kvstore-compaction-interval`); 0 or absent: no periodic compaction. */
  compactionIntervalMs?: number
  /** Hears about failed periodic compactions (the daemon logs them). */
  onCompactionError?: (err: unknown) => void
}

/** The database file inside the data directory: the store's whole state (SQLite keeps `state.db-wal` beside it). */
export const EMBEDDED_STORE_FILE = 'state.db'

/** Opening the store failed; the message is meant for the operator as it is. */
export class EmbeddedStoreError extends Error {
  override name = 'EmbeddedStoreError'
}

/**
 * Opens the store in the database `connect` returns, `location` naming it in
 * messages: `cannot open the embedded store at <location>: <cause>`. What
 * `connect` throws (say, while making the directory) is reported the same way.
 */
export function openSqlStorage(location: string, connect: () => SqlDriver, opts: EmbeddedStoreOptions = {}): SqlStorage {
  let db: SqlDriver | undefined
  let storage: SqlStorage
  try {
    db = connect()
    storage = SqlStorage.open(db, opts)
  } catch (err) {
    try {
      db?.close()
    } catch {
      // The open already failed; that failure is the one to report.
    }
    throw openFailure(location, err)
  }
  if (opts.compactionIntervalMs) storage.startCompactor(opts.compactionIntervalMs, opts.onCompactionError)
  return storage
}

function openFailure(location: string, err: unknown): EmbeddedStoreError {
  return new EmbeddedStoreError(`cannot open the embedded store at ${location}: ${describeCause(err)}`, { cause: err })
}

function describeCause(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  // SQLite's own text, with what it means here.
  if (sqliteCode(err) === 'SQLITE_BUSY') return `${message} (another process has it open)`
  return message
}
