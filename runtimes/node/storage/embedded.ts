/**
 * The embedded store in `--data-dir`, over whichever SQLite driver the
 * runtime supplies (libsql under Node, bun:sqlite, node:sqlite under Deno):
 * the file layout and the failure messages are the same everywhere, so one
 * runtime opens a data directory another wrote.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type SqlDriver, sqliteCode } from '../../../core/storage/sql/driver.js'
import { EMBEDDED_STORE_FILE, EmbeddedStoreError, type EmbeddedStoreOptions, openSqlStorage } from '../../../core/storage/sql/open.js'
import { DEFAULT_SHARED_BUSY_TIMEOUT_MS } from '../../../core/storage/sql/log-follower.js'
import type { SqlStorage } from '../../../core/storage/sql/sql-storage.js'

export interface EmbeddedStoreDirOptions extends EmbeddedStoreOptions {
  /** `--data-dir`: created (mode 0700, it holds Secrets) when missing; the store's files in it are 0600 either way. */
  dataDir: string
}

/**
 * Opens (creating when missing) the store in `<dataDir>/state.db`. Fails with
 * an EmbeddedStoreError naming the file and the cause when the directory
 * cannot be made, the file is not a store's database, or another process has it.
 */
export async function openEmbeddedStoreWith(opts: EmbeddedStoreDirOptions, openSqlite: (path: string) => SqlDriver): Promise<SqlStorage> {
  const { dataDir, ...storeOptions } = opts
  const path = join(dataDir, EMBEDDED_STORE_FILE)
  const open = () =>
    openSqlStorage(
      path,
      () => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 })
        keepPrivate(path)
        return openSqlite(path)
      },
      storeOptions,
    )
  if (!storeOptions.shared) return open()
  // Workers start together: while one lays the file out (the write-ahead log, the tables), another's
  // open may find it locked at a moment SQLite does not wait through. It tries again, within the busy timeout.
  const deadline = Date.now() + (storeOptions.shared.busyTimeoutMs ?? DEFAULT_SHARED_BUSY_TIMEOUT_MS)
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return open()
    } catch (err) {
      if (!(err instanceof EmbeddedStoreError) || sqliteCode(err.cause) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}

/** The database file and the two SQLite keeps beside it (its write-ahead log and the log's index). */
const STORE_FILE_SUFFIXES = ['', '-wal', '-shm']

/**
 * Makes the store's files readable by their owner alone, as etcd creates
 * its own (0600) whatever the directory's mode: a data directory made
 * beforehand (by a package, a volume mount) may be open to other users,
 * and SQLite would create the file by the umask (0644), every Secret in it
 * readable by anyone on the machine. The database file is created empty
 * with mode 0600 (SQLite gives its log files the database file's mode);
 * files found with a looser mode are made 0600.
 */
function keepPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (err) {
    // Already there (made by an earlier start, or by another worker starting beside this one).
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  for (const suffix of STORE_FILE_SUFFIXES) {
    const file = path + suffix
    if (existsSync(file) && statSync(file).mode & 0o077) chmodSync(file, 0o600)
  }
}
