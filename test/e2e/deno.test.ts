/**
 * The daemon under Deno: `deno run` on runtimes/deno/main.ts with the
 * permissions the README lists, offline, npm packages read from this
 * checkout's node_modules; kubectl drives it (runtime-scenario.ts).
 * A missing deno is a failure, never a skip (it is a dev dependency).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { it } from 'node:test'
import { helpText } from '../../core/options/flags/index.js'
import { runtimeScenario } from './runtime-scenario.js'

const exec = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const DENO = join(ROOT, 'node_modules', '.bin', 'deno')

/** The README's command line, with the entry's absolute path. */
export const DENO_DAEMON = [
  DENO,
  'run',
  '--sloppy-imports',
  '--node-modules-dir=manual',
  '--allow-read',
  '--allow-write',
  '--allow-net',
  '--allow-env',
  '--allow-sys',
  join(ROOT, 'runtimes', 'deno', 'main.ts'),
]

it('the daemon under Deno prints the same --help as under Node', async () => {
  const [program, ...args] = DENO_DAEMON
  const { stdout } = await exec(program!, [...args, '--help'], { cwd: ROOT, timeout: 60_000 })
  assert.equal(stdout, helpText())
})

runtimeScenario('Deno', () => DENO_DAEMON)
