/** The daemon's runtime port under Node: SQLite through libsql's native binding, Node's own SHA-256. */
import type { DaemonRuntime } from './daemon-runtime.js'
import { openLibsql } from '../storage/sqlite.js'
import { nodeSha256Hex } from '../adapter/native-sha256.js'

export const nodeRuntime: DaemonRuntime = {
  name: 'node',
  version: process.versions.node,
  openSqlite: openLibsql,
  sha256Hex: nodeSha256Hex,
}
