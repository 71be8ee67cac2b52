/**
 * The embedded store under Node: libsql (a better-sqlite3-compatible,
 * synchronous SQLite binding with a prebuilt binary) behind the core's
 * driver port, and the factory the daemon calls for `--data-dir`.
 */
import { createRequire } from 'node:module'
import type Database from 'libsql'
import type { SqlDriver, SqlRow, SqlValue } from '../../../core/storage/sql/driver.js'
import type { SqlStorage } from '../../../core/storage/sql/sql-storage.js'
import { type EmbeddedStoreDirOptions, openEmbeddedStoreWith } from './embedded.js'

export type NodeEmbeddedStoreOptions = EmbeddedStoreDirOptions

/** The embedded store in `<dataDir>/state.db` through libsql (see embedded.ts). */
export function openEmbeddedStore(opts: NodeEmbeddedStoreOptions): Promise<SqlStorage> {
  return openEmbeddedStoreWith(opts, openLibsql)
}

/**
 * libsql's native module (some 5 MB resident once mapped), loaded when a
 * database is first opened: a daemon on etcd never opens one. `require`
 * because opening is synchronous, and the package is CommonJS anyway.
 */
let libsql: typeof Database | undefined
const loadLibsql = (): typeof Database => (libsql ??= withoutNodeReportOnGlibc(() => createRequire(import.meta.url)('libsql') as typeof Database))

/**
 * libsql's loader asks `process.report.getReport()` whether the C library
 * is glibc, to pick its prebuilt binary: a full diagnostic report (about
 * 1 MB resident kept and some milliseconds at every start). detect-libc,
 * which libsql loads anyway, answers that from the dynamic linker's file;
 * when it says glibc, the loader is given a report that says so too, and
 * anything else loads as it always did.
 */
function withoutNodeReportOnGlibc<T>(load: () => T): T {
  const fromLibsql = createRequire(createRequire(import.meta.url).resolve('libsql'))
  let glibc = false
  try {
    const detectLibc = fromLibsql('detect-libc') as { familySync(): string | null; GLIBC: string }
    glibc = detectLibc.familySync() === detectLibc.GLIBC
  } catch {
    // Without detect-libc the loader decides alone, as before.
  }
  const report = Object.getOwnPropertyDescriptor(process, 'report')
  if (!glibc || !report?.configurable) return load()
  Object.defineProperty(process, 'report', { configurable: true, enumerable: report.enumerable, value: { getReport: () => ({ header: { glibcVersionRuntime: 'detected' } }) } })
  try {
    return load()
  } finally {
    Object.defineProperty(process, 'report', report)
  }
}

/** A libsql connection to the database file at `path`, as the core's driver port. */
export function openLibsql(path: string): SqlDriver {
  let db: Database.Database
  try {
    const Database = loadLibsql()
    // No busy wait: a store alone on its file must keep a second one out at once (a store sharing
    // the file with other workers sets its own wait, schema.ts).
    db = new Database(path, { timeout: 0 })
  } catch (err) {
    throw cannotOpen(err)
  }
  return {
    exec: (sql) => void db.exec(sql),
    prepare(sql) {
      const statement = db.prepare(sql)
      // Parameters always go as one array: libsql reads a lone typed array
      // as named parameters and aborts the process (tursodatabase/libsql-js#234).
      return {
        run: (...params: SqlValue[]) => {
          const { changes, lastInsertRowid } = statement.run(params)
          return { changes, lastInsertRowid }
        },
        get: (...params: SqlValue[]) => withBlobsAsBytes(statement.get(params) as SqlRow | undefined),
        all: (...params: SqlValue[]) => (statement.all(params) as SqlRow[]).map((row) => withBlobsAsBytes(row)!),
      }
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
    close: () => void db.close(),
  }
}

/** libsql's all() hands blobs out as ArrayBuffers (get() as Buffers); the port promises Uint8Arrays. */
function withBlobsAsBytes(row: SqlRow | undefined): SqlRow | undefined {
  if (!row) return row
  for (const [name, value] of Object.entries(row)) {
    if ((value as unknown) instanceof ArrayBuffer) row[name] = new Uint8Array(value as unknown as ArrayBuffer)
  }
  return row
}

/** libsql reports a file it cannot open as `ConnectionFailed("… : 14")`; say it as SQLite does. */
function cannotOpen(err: unknown): unknown {
  const message = err instanceof Error ? err.message : String(err)
  if (/ConnectionFailed\(.*: 14"\)/.test(message)) return new Error('unable to open database file', { cause: err })
  return err
}
