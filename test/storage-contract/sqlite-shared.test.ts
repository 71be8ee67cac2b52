/**
 * The embedded store shared by several stores on one file, as the workers of
 * `--workers` share it: the storage contract on one shared store alone, and
 * on a pair where one store writes and the other reads and watches (told of
 * each commit as the workers tell each other); then revisions from writers
 * in two stores at once, strictly ordered and seen in that order by the
 * watches of both; a writing process killed with SIGKILL, after which the
 * other store holds every write it acknowledged, has seen each in its watch
 * in order, and writes on; and a shared file and an exclusive one keeping
 * each other out.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type Database from 'libsql'
import type { KubeObject } from '../../core/machinery/object.js'
import type { ListOptions, ReadOptions, Storage, StorageEvent, TryUpdate, UpdateOptions, WatchOptions } from '../../core/storage/interface.js'
import { EmbeddedStoreError } from '../../core/storage/sql/open.js'
import type { SqlStorage } from '../../core/storage/sql/sql-storage.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { runStorageContract } from './contract.js'

const root = mkdtempSync(join(tmpdir(), 'embedded-shared-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = () => join(root, `store-${++dirs}`)

/** A store sharing the file in `dataDir`; `onCommit` as the daemon's nudge to the other workers. */
function openShared(dataDir: string, onCommit?: () => void, followIntervalMs?: number, busyTimeoutMs?: number): Promise<SqlStorage> {
  return openEmbeddedStore({
    dataDir,
    shared: { ...(onCommit ? { onCommit } : {}), ...(followIntervalMs ? { followIntervalMs } : {}), ...(busyTimeoutMs ? { busyTimeoutMs } : {}) },
  })
}

/** Writes go to one store, reads and watches to the other, as a client's requests land on two workers. */
class WriterAndReader implements Storage {
  constructor(
    readonly writer: SqlStorage,
    readonly reader: SqlStorage,
  ) {}

  static async open(): Promise<WriterAndReader> {
    const dir = freshDir()
    const peer: { reader?: SqlStorage } = {}
    const writer = await openShared(dir, () => peer.reader?.changed())
    peer.reader = await openShared(dir)
    return new WriterAndReader(writer, peer.reader)
  }

  create(key: string, obj: KubeObject) {
    return this.writer.create(key, obj)
  }
  get(key: string, opts?: ReadOptions) {
    return this.reader.get(key, opts)
  }
  list(prefix: string, opts?: ListOptions) {
    return this.reader.list(prefix, opts)
  }
  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: UpdateOptions) {
    return this.writer.guaranteedUpdate(key, tryUpdate, opts)
  }
  delete(key: string, opts?: Parameters<Storage['delete']>[1]) {
    return this.writer.delete(key, opts)
  }
  watch(prefix: string, opts?: WatchOptions) {
    return this.reader.watch(prefix, opts)
  }
  count(prefix: string) {
    return this.reader.count(prefix)
  }
  currentRevision() {
    return this.reader.currentRevision()
  }
  async close() {
    await this.writer.close()
    await this.reader.close()
  }
}

runStorageContract('embedded sqlite, shared, one store', () => openShared(freshDir()), {
  compact: async (s) => s.compact(await s.currentRevision()),
})

runStorageContract('embedded sqlite, shared, writes in one store and reads in another', () => WriterAndReader.open(), {
  compact: async (s) => s.writer.compact(await s.writer.currentRevision()),
})

const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `uid-${name}` }, data: { name } })
const PREFIX = '/registry/configmaps/'

async function collect(events: AsyncIterable<StorageEvent>, n: number): Promise<StorageEvent[]> {
  const out: StorageEvent[] = []
  for await (const e of events) {
    out.push(e)
    if (out.length === n) break
  }
  return out
}

describe('the embedded store shared by two stores', () => {
  it('orders the revisions of writes made in both at once, and both watches see every write in that order', async () => {
    const dir = freshDir()
    // No nudges: the stores find each other's commits by looking at the file.
    const a = await openShared(dir, undefined, 10)
    const b = await openShared(dir, undefined, 10)
    try {
      const start = String(await a.currentRevision())
      const watchA = a.watch(PREFIX, { resourceVersion: start })
      const watchB = b.watch(PREFIX, { resourceVersion: start })
      const writes = 40
      const created = await Promise.all(
        Array.from({ length: writes }, (_, i) => ((i % 2 === 0 ? a : b) as SqlStorage).create(`${PREFIX}default/cm-${i}`, configMap(`cm-${i}`))),
      )
      const revisions = created.map((o) => Number(o.metadata.resourceVersion))
      assert.equal(new Set(revisions).size, writes, 'every write has a revision of its own')
      const [seenA, seenB] = await Promise.all([collect(watchA, writes), collect(watchB, writes)])
      for (const seen of [seenA, seenB]) {
        const order = seen.map((e) => e.revision)
        assert.deepEqual(order, [...revisions].sort((x, y) => x - y), 'the watch sees every write in revision order')
        assert.ok(seen.every((e) => e.type === 'ADDED' && e.object.metadata.resourceVersion === String(e.revision)))
      }
      assert.equal(await a.currentRevision(), await b.currentRevision())
      assert.equal(await a.count(PREFIX), writes)
      watchA.stop()
      watchB.stop()
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('reads the other store\u2019s acknowledged write at once, before any nudge', async () => {
    const dir = freshDir()
    const a = await openShared(dir, undefined, 60_000)
    const b = await openShared(dir, undefined, 60_000)
    try {
      const written = await a.create(`${PREFIX}default/one`, configMap('one'))
      assert.deepEqual(await b.get(`${PREFIX}default/one`), written)
      assert.equal(await b.currentRevision(), Number(written.metadata.resourceVersion))
      const list = await b.list(PREFIX, { resourceVersion: '0' })
      assert.deepEqual(list.items, [written])
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('keeps every write a process acknowledged when it is killed with SIGKILL, and the other store writes on', async () => {
    const dir = freshDir()
    const survivor = await openShared(dir, undefined, 10)
    try {
      const start = await survivor.currentRevision()
      const watching = survivor.watch(PREFIX, { resourceVersion: String(start) })
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'sqlite-crash-child.ts'), dir, 'shared'], {
        cwd: join(import.meta.dirname, '..', '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
      const acknowledged = new Map<string, string>()
      let pending = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk
        const lines = pending.split('\n')
        pending = lines.pop() ?? ''
        for (const line of lines) {
          const [name, resourceVersion] = line.split(' ')
          acknowledged.set(name!, resourceVersion!)
        }
      })
      // This store writes too, between the other process's writes.
      const own: string[] = []
      for (let i = 0; acknowledged.size < 200; i++) {
        if (child.exitCode !== null) assert.fail(`the writer exited on its own: ${stderr}`)
        own.push((await survivor.create(`${PREFIX}default/own-${i}`, configMap(`own-${i}`))).metadata.resourceVersion!)
        await new Promise((r) => setTimeout(r, 2))
      }
      child.kill('SIGKILL')
      assert.equal(await exited, 'SIGKILL')
      const after = await survivor.create(`${PREFIX}default/after-kill`, configMap('after-kill'))
      for (const [name, resourceVersion] of acknowledged) {
        assert.equal((await survivor.get(`${PREFIX}default/${name}`))?.metadata.resourceVersion, resourceVersion, `${name} as acknowledged`)
      }
      const revision = Number(after.metadata.resourceVersion)
      // Every revision after the watch's start is a create, of one process or the other.
      const seen = await collect(watching, revision - start)
      watching.stop()
      const order = seen.map((e) => e.revision)
      assert.ok(order.every((r, i) => i === 0 || r > order[i - 1]!), 'the watch sees the writes in revision order')
      assert.equal(order.at(-1), revision)
      for (const [name, resourceVersion] of acknowledged) assert.ok(seen.some((e) => e.object.metadata.name === name && String(e.revision) === resourceVersion), `the watch saw ${name}`)
    } finally {
      await survivor.close()
    }
  })

  it('lets the process serve while a write waits for another process\u2019s write lock, and makes the write once the lock is free', async () => {
    const dir = freshDir()
    const store = await openShared(dir)
    // Another process in the middle of a long write: a connection of its own holding the write lock.
    const other = new (createRequire(import.meta.url)('libsql') as typeof Database)(join(dir, 'state.db'))
    try {
      other.exec('PRAGMA busy_timeout = 1000')
      other.exec('BEGIN IMMEDIATE')
      let settled = false
      const create = store.create('/registry/configmaps/default/waiting', configMap('waiting')).finally(() => (settled = true))
      // While the lock is held the process goes on: timers fire and a read answers before the write is made.
      // (A write that waited by blocking would hold up both until its wait ended in failure.)
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.equal(await store.get('/registry/configmaps/default/waiting'), undefined)
      assert.equal(settled, false, 'the write is still waiting for the lock')
      other.exec('COMMIT')
      const created = await create
      assert.equal(created.metadata.name, 'waiting')
      assert.equal((await store.get('/registry/configmaps/default/waiting'))?.metadata.resourceVersion, created.metadata.resourceVersion)
    } finally {
      other.close()
      await store.close()
    }
  })

  it('fails a write that waited for the write lock longer than the busy timeout, and stores nothing', async () => {
    const dir = freshDir()
    const store = await openShared(dir, undefined, undefined, 100)
    const other = new (createRequire(import.meta.url)('libsql') as typeof Database)(join(dir, 'state.db'))
    try {
      other.exec('PRAGMA busy_timeout = 1000')
      other.exec('BEGIN IMMEDIATE')
      await assert.rejects(store.create('/registry/configmaps/default/late', configMap('late')), /SQLITE_BUSY|database is locked/i)
      other.exec('ROLLBACK')
      assert.equal(await store.get('/registry/configmaps/default/late'), undefined)
    } finally {
      other.close()
      await store.close()
    }
  })

  it('keeps a server that holds the file for itself out while the file is shared, and the other way round', async () => {
    const sharedDir = freshDir()
    const shared = await openShared(sharedDir)
    try {
      await assert.rejects(openEmbeddedStore({ dataDir: sharedDir }), (err: unknown) => err instanceof EmbeddedStoreError && /locked/.test(err.message))
    } finally {
      await shared.close()
    }
    const exclusiveDir = freshDir()
    const exclusive = await openEmbeddedStore({ dataDir: exclusiveDir })
    try {
      await assert.rejects(openShared(exclusiveDir, undefined, undefined, 50), (err: unknown) => err instanceof EmbeddedStoreError && /locked/.test(err.message))
    } finally {
      await exclusive.close()
    }
  })
})
