/**
 * The Deno driver (runtimes/deno/sqlite.ts, node:sqlite): the storage
 * contract under `deno test`, and the same files as the Node driver's: a
 * store Node holds is refused as locked, one Node wrote opens with its
 * objects. A missing deno binary is a failure, never a skip.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'

const ROOT = join(import.meta.dirname, '..', '..')
const DENO = join(ROOT, 'node_modules', '.bin', 'deno')
const FLAGS = ['--sloppy-imports', '--node-modules-dir=manual', '--allow-read', '--allow-write', '--allow-env', '--allow-sys']
const KEY = '/registry/configmaps/default/a'

const root = mkdtempSync(join(tmpdir(), 'embedded-store-deno-'))
after(() => rmSync(root, { recursive: true, force: true }))

async function runDeno(args: string[]): Promise<{ code: number | null; output: string; stdout: string }> {
  const child = spawn(DENO, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { code, output: `${stdout}${stderr}`, stdout }
}

async function openUnderDeno(dataDir: string): Promise<Record<string, unknown>> {
  const { code, output, stdout } = await runDeno(['run', ...FLAGS, join(import.meta.dirname, 'sqlite-deno-child.ts'), dataDir, KEY])
  assert.equal(code, 0, output)
  return JSON.parse(stdout) as Record<string, unknown>
}

it('passes the storage contract under Deno with node:sqlite', async () => {
  const { code, output } = await runDeno(['test', ...FLAGS, join(import.meta.dirname, 'sqlite-deno-contract.ts')])
  assert.equal(code, 0, output)
  assert.match(output, /\| 0 failed/)
})

it('refuses a store Node holds as locked, and opens what Node wrote', async () => {
  const dataDir = join(root, 'shared')
  const node = await openEmbeddedStore({ dataDir })
  const written = await node.create(KEY, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { v: '1' } })
  try {
    assert.deepEqual(await openUnderDeno(dataDir), {
      opened: false,
      error: `cannot open the embedded store at ${join(dataDir, 'state.db')}: database is locked (another process has it open)`,
    })
  } finally {
    await node.close()
  }
  assert.deepEqual(await openUnderDeno(dataDir), { opened: true, revision: 2, object: written })
})
