/**
 * The embedding examples for vitest and jest pass under their own runner,
 * started as a user starts it (wrangler-free-examples/README.md): seeding,
 * reset() between tests and the activity log, in each runner's idiom. Both
 * read the package through its self-reference, so `npm run build` first.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')

interface RunnerReport {
  numTotalTests: number
  numPassedTests: number
  numFailedTests: number
}

/** Runs a test runner to its end (bounded) and reads the JSON report it prints; its output is in the failure message. */
function runReporting(args: readonly string[]): Promise<{ code: number; report: RunnerReport; output: string }> {
  // Without NODE_TEST_CONTEXT, which would make a child node:test report to this runner.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, env: { ...env, NO_COLOR: '1', CI: '1' }, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const output = `${stdout}\n${stderr}`
      const start = stdout.indexOf('{')
      try {
        const report = JSON.parse(stdout.slice(start)) as RunnerReport
        resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, report, output })
      } catch {
        reject(new Error(`no JSON report (${err?.message ?? 'exit 0'}):\n${output}`))
      }
    })
  })
}

describe('embedding examples under vitest and jest', () => {
  it('vitest.test.ts passes under `vitest run`: 4 tests, none failed', async () => {
    const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
    const config = join('wrangler-free-examples', 'vitest.config.ts')
    const { code, report, output } = await runReporting([vitest, 'run', '--config', config, '--reporter=json', join('wrangler-free-examples', 'vitest.test.ts')])
    assert.equal(code, 0, output)
    assert.deepEqual([report.numTotalTests, report.numPassedTests, report.numFailedTests], [4, 4, 0], output)
  })

  it('jest.test.mjs passes under jest with ES modules: 3 tests, none failed', async () => {
    const jest = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js')
    const config = join('wrangler-free-examples', 'jest.config.json')
    const { code, report, output } = await runReporting(['--experimental-vm-modules', jest, '--config', config, '--json'])
    assert.equal(code, 0, output)
    assert.deepEqual([report.numTotalTests, report.numPassedTests, report.numFailedTests], [3, 3, 0], output)
  })
})
