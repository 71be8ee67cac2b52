/**
 * The daemon under Deno: `deno run` on runtimes/deno/main.ts with the
 * permissions docs/operations.md lists, offline, npm packages read from this
 * checkout's node_modules; kubectl drives it (runtime-scenario.ts).
 * A missing deno is a failure, never a skip (it is a dev dependency).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

it('refuses to start with --tls-cipher-suites, which Deno cannot enforce, and writes nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-deno-refusal-'))
  const [program, ...args] = DENO_DAEMON
  const flags = ['--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', '--secure-port=0', '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`]
  try {
    // A daemon that started anyway is killed by the timeout, and the test fails on its exit.
    const run = await exec(program!, [...args, ...flags], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code ?? -1, stderr: err.stderr ?? '' }),
    )
    assert.equal(run.code, 1, run.stderr)
    assert.match(run.stderr, /Error: --tls-cipher-suites: not enforced under deno \S+ \(Deno's TLS ignores a cipher suite list\); refusing to start/)
    assert.deepEqual(readdirSync(dir), [], 'no certificate or store was made')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

runtimeScenario('Deno', () => DENO_DAEMON)
