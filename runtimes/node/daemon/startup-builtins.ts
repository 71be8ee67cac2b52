/**
 * Node's built-in modules a start loads by the time it serves, loaded
 * before start-up sets V8's flags.
 *
 * Node compiles its built-in modules with a code cache made when Node was
 * built, under V8's default flags, and V8 takes a code cache only under
 * the flags it was made with. While start-up holds V8's compilers
 * (optimizing-compiler.ts) the flags differ, and every built-in module
 * loaded meanwhile is compiled from its source: twice the time for the
 * daemon's set (TLS, HTTP/1.1 and HTTP/2, fetch's classes, which Node
 * loads at the first read of one of their globals), some 40 ms of a start
 * on the machine of docs/benchmarks.md. Loaded first, they come from the
 * cache. A module missing from the list is loaded from its source when
 * first needed, as before: the list is about time, not about what works.
 */
import { createRequire } from 'node:module'

/** By their public names, in the order a start loads them (the daemon on etcd or on its embedded store, Node 20). */
const STARTUP_BUILTINS = [
  'os',
  'string_decoder',
  'stream',
  'stream/promises',
  'v8',
  'vm',
  'crypto',
  'diagnostics_channel',
  'net',
  'assert',
  'http',
  'tls',
  'http2',
  'zlib',
  'perf_hooks',
  'util/types',
  'worker_threads',
  'fs/promises',
  'https',
  'dns',
  'dns/promises',
  'dgram',
  'child_process',
  'cluster',
  'inspector',
  'module',
]

export function loadStartupBuiltins(): void {
  const load = createRequire(import.meta.url)
  for (const name of STARTUP_BUILTINS) load(`node:${name}`)
  // Node's fetch classes (Response, Request, Headers) load at the first read of one of them, Web Crypto at its first
  // use (the service account keys' import).
  void globalThis.Response
  void globalThis.crypto.subtle
}
