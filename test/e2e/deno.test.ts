/**
 * The daemon under Deno: `deno run` on runtimes/deno/main.ts with the
 * permissions the README lists, offline, npm packages read from this
 * checkout's node_modules; kubectl drives it (runtime-scenario.ts).
 * A missing deno is a failure, never a skip (it is a dev dependency).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { it } from 'node:test'
import { helpText } from '../../core/options/flags/index.js'
import { DENO_DAEMON, runtimeScenario } from './runtime-scenario.js'

const exec = promisify(execFile)

it('the daemon under Deno prints the same --help as under Node', async () => {
  const [program, ...args] = DENO_DAEMON
  const { stdout } = await exec(program!, [...args, '--help'], { timeout: 60_000 })
  assert.equal(stdout, helpText())
})

runtimeScenario('Deno', () => DENO_DAEMON)
