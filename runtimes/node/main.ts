#!/usr/bin/env node
/** The `apiserver` bin under Node. Everything lives in daemon.ts so tests can run it in-process. */
import { runDaemon } from './daemon.js'
import { nodeRuntime } from './node-runtime.js'

process.exitCode = await runDaemon(process.argv.slice(2), { runtime: nodeRuntime })
// Do not wait for stray handles (keep-alive timers, log streams): shutdown already finished its work.
process.exit()
