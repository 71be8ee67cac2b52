/**
 * The embedded store under Bun: bun:sqlite (built in) behind the core's
 * driver port. The file format is the Node runtime's, so either runtime can
 * open a data directory the other wrote.
 */
// bun:sqlite exists only under Bun; the tree type-checks without bun-types,
// so the slice used here is declared below.
// @ts-expect-error -- resolved by Bun at run time
import { Database as BunSqliteDatabase } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { SqlDriver, SqlRow, SqlValue } from '../../core/storage/sql/driver.js'
import { EMBEDDED_STORE_FILE, type EmbeddedStoreOptions, openSqlStorage } from '../../core/storage/sql/open.js'
import type { SqlStorage } from '../../core/storage/sql/sql-storage.js'

interface BunStatement {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint }
  get(...params: SqlValue[]): SqlRow | null
  all(...params: SqlValue[]): SqlRow[]
}

interface BunDatabase {
  exec(sql: string): void
  prepare(sql: string): BunStatement
  transaction<T>(fn: () => T): () => T
  close(): void
}

const Database = BunSqliteDatabase as new (path: string, options: { create: boolean }) => BunDatabase

/** Opens (creating when missing) the store in `<dataDir>/state.db`, failing as the Node factory does. */
export async function openEmbeddedStore(opts: EmbeddedStoreOptions & { dataDir: string }): Promise<SqlStorage> {
  const { dataDir, ...storeOptions } = opts
  const path = join(dataDir, EMBEDDED_STORE_FILE)
  return openSqlStorage(
    path,
    () => {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 })
      return openBunSqlite(path)
    },
    storeOptions,
  )
}

/** A bun:sqlite connection to the database file at `path`, as the core's driver port. */
export function openBunSqlite(path: string): SqlDriver {
  const db = new Database(path, { create: true })
  return {
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const statement = db.prepare(sql)
      return {
        run: (...params) => statement.run(...params),
        get: (...params) => statement.get(...params) ?? undefined,
        all: (...params) => statement.all(...params),
      }
    },
    transaction: (fn) => db.transaction(fn)(),
    close: () => db.close(),
  }
}
