/**
 * The entry of the bin's classic-script bundle (dist/runtimes/node/daemon-script.cjs,
 * written by tools/bundle.ts): the daemon and Node's runtime port, which
 * main.ts runs with a V8 code cache (script-code-cache.ts).
 */
export { runDaemon } from './daemon/daemon.js'
export { nodeRuntime } from './daemon/node-runtime.js'
