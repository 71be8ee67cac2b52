/**
 * The `apiserver` daemon under Deno, with the same flags, config files and
 * behaviour as under Node (runtimes/node/daemon/daemon.ts). Run from a checkout with
 * its node_modules installed, offline (docs/operations.md, "Under Bun or Deno", lists the permissions):
 *
 *   deno run --sloppy-imports --node-modules-dir=manual \
 *     --allow-read --allow-write --allow-net --allow-env --allow-sys \
 *     runtimes/deno/main.ts --cert-dir=... --data-dir=...
 *
 * Deno's node:* library does the serving (node:http2 and node:tls with the
 * client certificate of each connection); the SQLite driver is Deno's
 * built-in node:sqlite, so no native binding is loaded.
 */
import { runDaemon } from '../node/daemon/daemon.js'
import { denoRuntime } from './runtime.js'

process.exitCode = await runDaemon(process.argv.slice(2), { runtime: denoRuntime })
// As under Node: shutdown has finished its work; stray handles do not hold the exit.
process.exit()
