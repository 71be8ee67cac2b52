/** The daemon's runtime port under Deno: SQLite through the built-in node:sqlite. */
import type { DaemonRuntime } from '../node/daemon-runtime.js'
import { openDenoSqlite } from './sqlite.js'

// Only Deno.version is used; the tree type-checks without Deno's types.
declare const Deno: { version: { deno: string } }

export const denoRuntime: DaemonRuntime = {
  name: 'deno',
  version: Deno.version.deno,
  openSqlite: openDenoSqlite,
}
