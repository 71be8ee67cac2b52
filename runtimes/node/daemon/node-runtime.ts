/** The daemon's runtime port under Node: SQLite through libsql's native binding. */
import type { DaemonRuntime } from './daemon-runtime.js'
import { openLibsql } from '../storage/sqlite.js'

export const nodeRuntime: DaemonRuntime = {
  name: 'node',
  version: process.versions.node,
  openSqlite: openLibsql,
}
