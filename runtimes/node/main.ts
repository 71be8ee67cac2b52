#!/usr/bin/env node
/** The `apiserver` bin under Node. Everything lives in daemon.ts so tests can run it in-process. */
import { youngGenerationHeldUntilListening } from './young-generation.js'

// Set before the daemon's modules load (hence the dynamic imports): their evaluation is part of start-up.
const releaseYoungGeneration = youngGenerationHeldUntilListening()
const { runDaemon } = await import('./daemon.js')
const { nodeRuntime } = await import('./node-runtime.js')

process.exitCode = await runDaemon(process.argv.slice(2), { runtime: nodeRuntime, onListening: releaseYoungGeneration })
// Do not wait for stray handles (keep-alive timers, log streams): shutdown already finished its work.
process.exit()
