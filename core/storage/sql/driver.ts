/**
 * The port the SQL store talks through: SQLite through each runtime's own
 * driver (docs/architecture.md). It is the synchronous subset that
 * better-sqlite3, libsql and bun:sqlite share, so each runtime's adapter is a
 * few lines (runtimes/node/storage/sqlite.ts, runtimes/bun/sqlite.ts).
 *
 * Parameters are positional (`?`). Integers come back as JS numbers: revisions
 * stay far below 2^53.
 */

export type SqlValue = null | number | bigint | string | Uint8Array

export type SqlRow = Record<string, SqlValue>

export interface SqlRunResult {
  changes: number
  lastInsertRowid: number | bigint
}

export interface SqlStatement {
  run(...params: SqlValue[]): SqlRunResult
  /** The first row, or undefined when there is none. */
  get(...params: SqlValue[]): SqlRow | undefined
  all(...params: SqlValue[]): SqlRow[]
}

export interface SqlDriver {
  /** Runs one or more statements that take no parameters (schema, pragmas). */
  exec(sql: string): void
  prepare(sql: string): SqlStatement
  /** Runs `fn` inside BEGIN ... COMMIT, rolling back when it throws. */
  transaction<T>(fn: () => T): T
  close(): void
}

/** An error a driver raised, with SQLite's result code name when it gives one (`SQLITE_BUSY`). */
export function sqliteCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined
}
