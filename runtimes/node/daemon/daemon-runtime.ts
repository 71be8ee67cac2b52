/**
 * What the daemon needs from the runtime it runs on, beyond the node:*
 * standard library that Node, Bun and Deno all provide (files, TLS and
 * HTTP/2 with the peer certificate, sockets, signals). Each runtime's entry
 * passes one of these to runDaemon; daemon.ts itself imports no driver, so a
 * runtime whose build cannot load Node's native SQLite binding never loads it.
 */
import type { FlagName } from '../../../core/options/flags/index.js'
import type { SqlDriver } from '../../../core/storage/sql/driver.js'

export interface DaemonRuntime {
  /** `node`, `bun` or `deno`: shown by `--version=raw` and at start-up. */
  name: 'node' | 'bun' | 'deno'
  /** The runtime's own version, e.g. `22.12.0`. */
  version: string
  /**
   * A connection to the embedded store's SQLite file at `path`, created when
   * missing, failing at once (never waiting) when another process holds it.
   */
  openSqlite(path: string): SqlDriver
  /**
   * Flags this runtime cannot put in effect, each with the reason. Giving
   * one stops start-up with that reason, as any security setting the server
   * does not enforce does.
   */
  unenforcedFlags?: Readonly<Partial<Record<FlagName, string>>>
}
