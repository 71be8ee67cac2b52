/**
 * The kubectl scenario the Bun binary and Deno run (runtime-scenario.ts),
 * against the built Node daemon, so the three runtimes answer the same steps.
 */
import { BIN } from './daemon.js'
import { runtimeScenario } from './runtime-scenario.js'

runtimeScenario('Node', () => [process.execPath, BIN])
