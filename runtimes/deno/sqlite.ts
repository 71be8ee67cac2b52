/**
 * The embedded store's SQLite under Deno: the built-in node:sqlite, so no
 * native binding (and no --allow-ffi) is needed. The file format is the
 * other runtimes', so any of them opens a data directory another wrote.
 */
// node:sqlite is newer than the @types/node this tree builds with; the slice used is declared below.
// @ts-expect-error -- resolved by Deno at run time
import { DatabaseSync } from 'node:sqlite'
import type { SqlDriver, SqlRow, SqlValue } from '../../core/storage/sql/driver.js'

interface DenoStatement {
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint }
  get(...params: SqlValue[]): SqlRow | undefined
  all(...params: SqlValue[]): SqlRow[]
}

interface DenoDatabase {
  exec(sql: string): void
  prepare(sql: string): DenoStatement
  close(): void
}

const Database = DatabaseSync as new (path: string, options: { timeout: number }) => DenoDatabase

/** A node:sqlite connection to the database file at `path`, as the core's driver port. */
export function openDenoSqlite(path: string): SqlDriver {
  // No busy wait: the store is the file's only user, and a second one must fail at once.
  const db = guarded(() => new Database(path, { timeout: 0 }))
  return {
    exec: (sql) => guarded(() => db.exec(sql)),
    prepare(sql) {
      const statement = guarded(() => db.prepare(sql))
      return {
        run: (...params) =>
          guarded(() => {
            const { changes, lastInsertRowid } = statement.run(...params)
            return { changes: Number(changes), lastInsertRowid }
          }),
        // Rows come with a null prototype; the store reads them as plain records.
        get: (...params) => guarded(() => plain(statement.get(...params))),
        all: (...params) => guarded(() => statement.all(...params).map((row) => plain(row)!)),
      }
    },
    transaction<T>(fn: () => T): T {
      db.exec('BEGIN')
      try {
        const result = fn()
        db.exec('COMMIT')
        return result
      } catch (err) {
        db.exec('ROLLBACK')
        throw err
      }
    },
    close: () => db.close(),
  }
}

function plain(row: SqlRow | undefined): SqlRow | undefined {
  return row ? { ...row } : undefined
}

/**
 * node:sqlite under Deno tags every failure `ERR_SQLITE_ERROR`; the store
 * tells "another process has the file" by SQLite's own code name, so a
 * locked database gets `SQLITE_BUSY` as the other drivers report it.
 */
function guarded<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    if (err instanceof Error && /database is locked/.test(err.message)) Object.assign(err, { code: 'SQLITE_BUSY' })
    throw err
  }
}
