/**
 * The single-file Bun binary is the daemon: `npm run build:bun`'s command
 * compiles runtimes/bun/main.ts, the binary prints the Node daemon's help,
 * and kubectl drives it with the admin.kubeconfig it writes (runtime-scenario.ts).
 * A missing bun is a failure, never a skip (it is a dev dependency).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, it } from 'node:test'
import { helpText } from '../../core/options/flags/index.js'
import { runtimeScenario } from './runtime-scenario.js'

const exec = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const out = mkdtempSync(join(tmpdir(), 'apiserver-bun-build-'))
const BINARY = join(out, 'apiserver-bun')

let built: Promise<string> | undefined
/** Compiles the binary once, as package.json's build:bun does (into a temporary directory). */
function binary(): Promise<string> {
  built ??= exec(BUN, ['build', '--compile', 'runtimes/bun/main.ts', 'runtimes/node/yaml-worker.ts', '--outfile', BINARY], { cwd: ROOT, timeout: 120_000 }).then(() => BINARY)
  return built
}

after(() => rmSync(out, { recursive: true, force: true }))

it('the Bun binary prints the same --help as the Node daemon', async () => {
  const { stdout } = await exec(await binary(), ['--help'], { timeout: 30_000 })
  assert.equal(stdout, helpText())
})

it('the Bun binary names its runtime in --version=raw', async () => {
  const { stdout } = await exec(await binary(), ['--version=raw'], { timeout: 30_000 })
  assert.match(JSON.parse(stdout).runtime, /^bun \d/)
})

runtimeScenario('the Bun binary', async () => [await binary()])
