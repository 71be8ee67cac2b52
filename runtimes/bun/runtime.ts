/** The daemon's runtime port under Bun: SQLite through the built-in bun:sqlite. */
import type { DaemonRuntime } from '../node/daemon/daemon-runtime.js'
import { openBunSqlite } from './sqlite.js'

// Only Bun.version is used; the tree type-checks without bun-types.
declare const Bun: { version: string }

export const bunRuntime: DaemonRuntime = {
  name: 'bun',
  version: Bun.version,
  openSqlite: openBunSqlite,
}
