/**
 * The embedding examples run as a user would run them (`node --import tsx
 * <file>`) and print what their header comments promise. They import the
 * package by name, so this also proves the package self-reference resolves
 * (it needs `npm run build` first, as `npm test` does).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'

const ROOT = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)

async function runExample(file: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join('wrangler-free-examples', file)], {
    cwd: ROOT,
    timeout: 30_000,
  })
  return stdout.trim().split('\n')
}

describe('wrangler-free examples', () => {
  it('node-test.ts passes under node:test: seeded objects, reset between tests, a moved clock', async () => {
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of printing.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', join('wrangler-free-examples', 'node-test.ts')], {
      cwd: ROOT,
      env,
      timeout: 30_000,
    })
    assert.match(stdout, /^# pass 4$/m, stdout)
    assert.match(stdout, /^# fail 0$/m, stdout)
  })

  it('in-process-fetch.ts creates a ConfigMap (201) and lists it back (200) without a network', async () => {
    const lines = await runExample('in-process-fetch.ts')
    assert.equal(lines.length, 2, lines.join('\n'))
    assert.match(lines[0] ?? '', /^create: 201 settings resourceVersion=\d+$/)
    assert.equal(lines[1], 'list: 200 ConfigMapList [settings={"mode":"fast"}]')
  })

  it('client-node-over-loopback.ts creates, lists and watches ConfigMaps with @kubernetes/client-node over TLS', async () => {
    const lines = await runExample('client-node-over-loopback.ts')
    assert.match(lines[0] ?? '', /^listening: https:\/\/127\.0\.0\.1:\d+$/)
    assert.deepEqual(lines.slice(1), ['create: first uid=set', 'list: first', 'watch: ADDED second color=green'])
  })
})
