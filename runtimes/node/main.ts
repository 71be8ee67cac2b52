#!/usr/bin/env node
/** The `apiserver` bin. Everything lives in daemon.ts so tests can run it in-process. */
import { runDaemon } from './daemon.js'

process.exitCode = await runDaemon(process.argv.slice(2))
// Do not wait for stray handles (keep-alive timers, log streams): shutdown already finished its work.
process.exit()
