/**
 * The `apiserver` daemon under Bun, with the same flags, config files and
 * behaviour as under Node (runtimes/node/daemon/daemon.ts): `bun runtimes/bun/main.ts
 * --help`, or the single-file binary `npm run build:bun` makes from this file.
 *
 * Bun brings what the daemon needs of the node:* library: node:http2 and
 * node:tls serve HTTPS and HTTP/2 and show the verified client certificate of
 * each connection (Bun.serve would not), node:fs, sockets, signals. What
 * differs is the SQLite driver: bun:sqlite is built in, where Node's libsql
 * is a native binding a compiled binary could not load.
 */
import { runDaemon } from '../node/daemon/daemon.js'
import { bunRuntime } from './runtime.js'

process.exitCode = await runDaemon(process.argv.slice(2), { runtime: bunRuntime })
// As under Node: shutdown has finished its work; stray handles do not hold the exit.
process.exit()
