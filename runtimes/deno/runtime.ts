/** The daemon's runtime port under Deno: SQLite through the built-in node:sqlite. */
import type { DaemonRuntime } from '../node/daemon/daemon-runtime.js'
import { openDenoSqlite } from './sqlite.js'

// Only Deno.version is used; the tree type-checks without Deno's types.
declare const Deno: { version: { deno: string } }

export const denoRuntime: DaemonRuntime = {
  name: 'deno',
  version: Deno.version.deno,
  openSqlite: openDenoSqlite,
  // Deno's node:tls accepts the OpenSSL cipher list and ignores it: a TLS 1.2 client still gets suites the flag excludes.
  unenforcedFlags: { 'tls-cipher-suites': "Deno's TLS ignores a cipher suite list" },
}
