/**
 * "A write acknowledged to the client survives kill -9": a child process
 * writes into the embedded store and reports each acknowledged object; it is
 * killed with SIGKILL mid-stream, and the reopened store must hold every
 * object it reported, with a revision consistent with them.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { EmbeddedStoreError } from '../../core/storage/sql/open.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'

const ROOT = join(import.meta.dirname, '..', '..')
const CHILD = join(import.meta.dirname, 'sqlite-crash-child.ts')
const ACKNOWLEDGED_BEFORE_KILL = 300

const root = mkdtempSync(join(tmpdir(), 'embedded-store-crash-'))
after(() => rmSync(root, { recursive: true, force: true }))

it('finds every acknowledged write after the writing process is killed with SIGKILL', () => killWhileWriting('one'))

it('finds every acknowledged write of writers committed in batches after their process is killed with SIGKILL', () => killWhileWriting('concurrent'))

/** `one`: one create after the other; `concurrent`: eight at once, which the store commits in batches. */
async function killWhileWriting(writers: 'one' | 'concurrent'): Promise<void> {
  const dataDir = join(root, `data-${writers}`)
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, ...(writers === 'concurrent' ? ['concurrent'] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  const acknowledged = new Map<string, string>()
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the writer acknowledged ${acknowledged.size} writes in 30 s; stderr: ${stderr}`)), 30000)
    let pending = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        const [name, resourceVersion] = line.split(' ')
        acknowledged.set(name!, resourceVersion!)
      }
      if (acknowledged.size >= ACKNOWLEDGED_BEFORE_KILL) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on('exit', (code) => reject(new Error(`the writer exited with ${code} on its own; stderr: ${stderr}`)))
  })

  // While the writer lives, its lock keeps this process out.
  await assert.rejects(openEmbeddedStore({ dataDir }), (err: unknown) => {
    assert.ok(err instanceof EmbeddedStoreError)
    assert.equal(err.message, `cannot open the embedded store at ${join(dataDir, 'state.db')}: database is locked (another process has it open)`)
    return true
  })

  child.kill('SIGKILL')
  assert.equal(await exited, 'SIGKILL')

  const store = await openEmbeddedStore({ dataDir })
  try {
    const missing: string[] = []
    for (const [name, resourceVersion] of acknowledged) {
      const obj = await store.get(`/registry/configmaps/default/${name}`)
      if (obj?.metadata.resourceVersion !== resourceVersion) missing.push(`${name}@${resourceVersion}`)
    }
    assert.deepEqual(missing, [], 'every acknowledged object is there at its acknowledged revision')
    // One create per revision from the first (2): the revision counts the objects, with no holes.
    const revision = await store.currentRevision()
    const stored = await store.count('/registry/configmaps/')
    assert.ok(stored >= acknowledged.size, 'the acknowledged ones and at most the writes in flight')
    assert.equal(revision, stored + 1)
    const list = await store.list('/registry/configmaps/')
    assert.equal(list.items.length, stored)
    assert.equal(Math.max(...list.items.map((o) => Number(o.metadata.resourceVersion))), revision)
    const next = await store.create('/registry/configmaps/default/after-crash', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-crash', namespace: 'default' },
    })
    assert.equal(next.metadata.resourceVersion, String(revision + 1))
  } finally {
    await store.close()
  }
}
