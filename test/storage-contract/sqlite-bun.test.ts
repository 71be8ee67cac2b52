/**
 * The Bun driver (runtimes/bun/sqlite.ts): the storage contract under
 * `bun test`, and the same files as the Node driver's: a data directory
 * written under Node opens under Bun with its objects and history, what Bun
 * writes reads back under Node, and the lock holds across the two runtimes.
 * A missing bun binary is a failure, never a skip.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const CHILD = join(import.meta.dirname, 'sqlite-bun-child.ts')
const CONTRACT = join(import.meta.dirname, 'sqlite-bun-contract.ts')
const KEY = '/registry/configmaps/default/a'

const root = mkdtempSync(join(tmpdir(), 'embedded-store-bun-'))
after(() => rmSync(root, { recursive: true, force: true }))

async function runBun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assert.ok(existsSync(BUN), `bun is required for this suite and was not found at ${BUN} (it is a devDependency: npm install)`)
  const child = spawn(BUN, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { code, stdout, stderr }
}

/** Runs the child under Bun and returns the JSON line it printed. */
async function underBun(dataDir: string, action: 'write' | 'open'): Promise<Record<string, unknown>> {
  const { code, stdout, stderr } = await runBun([CHILD, dataDir, action])
  assert.equal(code, 0, `bun exited with ${code}; stderr: ${stderr}`)
  return JSON.parse(stdout) as Record<string, unknown>
}

it('passes the storage contract under Bun with bun:sqlite', async () => {
  const { code, stdout, stderr } = await runBun(['test', CONTRACT])
  // bun test reports on stderr.
  const output = `${stdout}${stderr}`
  assert.equal(code, 0, output)
  assert.match(output, /^ 0 fail$/m)
  assert.match(output, /^ [1-9]\d* pass$/m)
})

it('opens under Bun what Node wrote, history included, and Node reads back what Bun wrote', async () => {
  const dataDir = join(root, 'shared')
  assert.deepEqual(await underBun(join(root, 'fresh'), 'open'), { opened: true, revision: 1 }, 'Bun makes a fresh store')
  const node = await openEmbeddedStore({ dataDir })
  const v1 = await node.create(KEY, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { v: '1' } })
  const v2 = await node.guaranteedUpdate(KEY, (cur) => ({ ...cur, data: { v: '2' } }))
  assert.deepEqual([v1.metadata.resourceVersion, v2.metadata.resourceVersion], ['2', '3'])

  const locked = await underBun(dataDir, 'open')
  assert.deepEqual(locked, {
    opened: false,
    error: `cannot open the embedded store at ${join(dataDir, 'state.db')}: database is locked (another process has it open)`,
  })
  await node.close()

  const fromBun = await underBun(dataDir, 'write')
  assert.deepEqual(fromBun['listed'], [v2])
  assert.deepEqual(fromBun['history'], [v1, v2])
  assert.equal(fromBun['revision'], 4)

  const again = await openEmbeddedStore({ dataDir })
  try {
    assert.deepEqual(await again.get('/registry/configmaps/default/from-bun'), fromBun['created'])
    assert.equal(await again.currentRevision(), 4)
  } finally {
    await again.close()
  }
})
