/**
 * The embedded store on real SQLite files: the storage contract, then what
 * only a durable store promises (everything survives a close and reopen) and
 * how it fails to open (each case names the file and the cause, and leaves
 * the file as it was).
 */
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'libsql'
import type { KubeObject } from '../../core/machinery/object.js'
import { yamlCodec } from '../../core/storage/codec.js'
import { type StorageEvent, StorageError } from '../../core/storage/interface.js'
import { EmbeddedStoreError } from '../../core/storage/sql/open.js'
import { openEmbeddedStore, openLibsql } from '../../runtimes/node/storage/sqlite.js'
import { SqlStorage } from '../../core/storage/sql/sql-storage.js'
import { runStorageContract } from './contract.js'

const root = mkdtempSync(join(tmpdir(), 'embedded-store-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = () => join(root, `store-${++dirs}`)

runStorageContract('embedded sqlite', () => openEmbeddedStore({ dataDir: freshDir() }), {
  compact: async (s) => s.compact(await s.currentRevision()),
})

const PREFIX = '/registry/configmaps/'
const key = (name: string) => `${PREFIX}default/${name}`

function configMap(name: string, value = 'one'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `uid-${name}` }, data: { value } }
}

const withValue = (value: string) => (cur: KubeObject) => ({ ...cur, data: { value } })

function rv(obj: KubeObject | undefined): number {
  return Number(obj?.metadata.resourceVersion)
}

function storageError(code: StorageError['code'], message?: string) {
  return (err: unknown) => {
    assert.ok(err instanceof StorageError, `expected a StorageError, got ${String(err)}`)
    assert.equal(err.code, code)
    if (message !== undefined) assert.equal(err.message, message)
    return true
  }
}

async function take(w: AsyncIterable<StorageEvent>, n: number): Promise<string[]> {
  const it = w[Symbol.asyncIterator]()
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const r = await it.next()
    assert.equal(r.done, false, 'the watch ended early')
    out.push(`${r.value!.type} ${r.value!.object.metadata.name ?? ''} ${r.value!.revision}`)
  }
  return out
}

/** Opens a store and closes it when the test ends. */
async function open(t: { after(fn: () => unknown): void }, dataDir: string, more: Partial<Parameters<typeof openEmbeddedStore>[0]> = {}) {
  const s = await openEmbeddedStore({ dataDir, ...more })
  t.after(() => s.close())
  return s
}

/** The rows of the store's log table, read with SQLite directly once the store is closed. */
function logRows(dataDir: string): Array<{ id: number; key: string; deleted: number }> {
  const db = new Database(join(dataDir, 'state.db'))
  try {
    return (db.prepare('SELECT id, key, deleted FROM log ORDER BY id').all([]) as Array<Record<string, unknown>>).map((r) => ({
      id: Number(r['id']),
      key: String(r['key']),
      deleted: Number(r['deleted']),
    }))
  } finally {
    db.close()
  }
}

describe('embedded store: restarts, compaction and the data directory', () => {
  it('finds objects, the revision and older versions again after a close and reopen', async (t) => {
    const dataDir = freshDir()
    const first = await openEmbeddedStore({ dataDir })
    const a1 = await first.create(key('a'), configMap('a'))
    const a2 = await first.guaranteedUpdate(key('a'), withValue('two'))
    const b = await first.create(key('b'), configMap('b'))
    const bGone = await first.delete(key('b'))
    const revision = await first.currentRevision()
    await first.close()

    const again = await open(t, dataDir)
    assert.equal(await again.currentRevision(), revision)
    assert.deepEqual(await again.get(key('a')), a2)
    assert.equal(await again.get(key('b')), undefined)
    assert.deepEqual(await again.get(key('a'), { resourceVersion: String(rv(a1)), resourceVersionMatch: 'Exact' }), a1)
    const old = await again.list(PREFIX, { resourceVersion: String(rv(b)), resourceVersionMatch: 'Exact' })
    assert.deepEqual(old.items, [a2, b])
    assert.deepEqual(await take(again.watch(PREFIX, { resourceVersion: String(rv(a1)) }), 3), [
      `MODIFIED a ${rv(a2)}`,
      `ADDED b ${rv(b)}`,
      `DELETED b ${rv(bGone)}`,
    ])
    const c = await again.create(key('c'), configMap('c'))
    assert.equal(rv(c), revision + 1, 'the revision goes on from where it was')
  })

  it('keeps counting revisions from the newest write even when compaction removed its row', async (t) => {
    const dataDir = freshDir()
    const first = await openEmbeddedStore({ dataDir })
    await first.create(key('a'), configMap('a'))
    const gone = await first.delete(key('a'))
    first.compact(rv(gone))
    await first.close()
    assert.deepEqual(logRows(dataDir), [], 'a deleted key leaves nothing behind once compacted')

    const again = await open(t, dataDir)
    assert.equal(await again.currentRevision(), rv(gone))
    assert.equal(rv(await again.create(key('a'), configMap('a'))), rv(gone) + 1)
  })

  it('keeps each live key newest version when compacting, and the compaction across a reopen', async (t) => {
    const dataDir = freshDir()
    const first = await openEmbeddedStore({ dataDir })
    const a1 = await first.create(key('a'), configMap('a'))
    await first.guaranteedUpdate(key('a'), withValue('two'))
    const a3 = await first.guaranteedUpdate(key('a'), withValue('three'))
    await first.create(key('b'), configMap('b'))
    await first.delete(key('b'))
    await first.create(key('c'), configMap('c'))
    await first.delete(key('c'))
    const c = await first.create(key('c'), configMap('c', 'again'))
    const compacted = await first.currentRevision()
    first.compact(compacted)
    await first.close()
    assert.deepEqual(
      logRows(dataDir).map((r) => [r.id, r.key]),
      [
        [rv(a3), key('a')],
        [rv(c), key('c')],
      ],
    )

    const again = await open(t, dataDir)
    assert.deepEqual((await again.list(PREFIX)).items, [a3, c])
    const atCompaction = await again.list(PREFIX, { resourceVersion: String(compacted), resourceVersionMatch: 'Exact' })
    assert.deepEqual(atCompaction.items, [a3, c])
    await assert.rejects(
      again.get(key('a'), { resourceVersion: String(rv(a1)), resourceVersionMatch: 'Exact' }),
      storageError('Compacted', 'The resourceVersion for the provided list is too old.'),
    )
    const old = again.watch(PREFIX, { resourceVersion: String(rv(a1)) })
    await assert.rejects(old[Symbol.asyncIterator]().next(), storageError('Compacted', `too old resource version: ${rv(a1)} (${compacted})`))
    const d = await again.create(key('d'), configMap('d'))
    assert.deepEqual(await take(again.watch(PREFIX, { resourceVersion: String(compacted) }), 1), [`ADDED d ${rv(d)}`])
  })

  it('compacts every interval up to what the previous run saw, so one interval of history stays', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] })
    const s = await open(t, freshDir())
    const exactly = (obj: KubeObject) =>
      s.get(key('a'), { resourceVersion: String(rv(obj)), resourceVersionMatch: 'Exact' }).then(
        (found) => (rv(found) === rv(obj) ? 'kept' : 'wrong version'),
        (err: unknown) => (err instanceof StorageError ? err.code : String(err)),
      )
    const a1 = await s.create(key('a'), configMap('a'))
    s.startCompactor(60000)
    const a2 = await s.guaranteedUpdate(key('a'), withValue('two'))
    t.mock.timers.tick(60000) // compacts up to a1: what the compactor saw when it started
    assert.deepEqual([await exactly(a1), await exactly(a2)], ['kept', 'kept'])
    const a3 = await s.guaranteedUpdate(key('a'), withValue('three'))
    t.mock.timers.tick(60000) // compacts up to a2
    assert.deepEqual([await exactly(a1), await exactly(a2), await exactly(a3)], ['Compacted', 'kept', 'kept'])

    s.startCompactor(0) // 0 disables it, as --kvstore-compaction-interval=0
    await s.guaranteedUpdate(key('a'), withValue('four'))
    t.mock.timers.tick(600000)
    assert.deepEqual([await exactly(a2), await exactly(a3)], ['kept', 'kept'])
  })

  it('stores objects in the codec it is given (YAML here) and reads them back', async (t) => {
    const dataDir = freshDir()
    const first = await openEmbeddedStore({ dataDir, codec: yamlCodec })
    const created = await first.create(key('a'), configMap('a'))
    await first.close()
    const db = new Database(join(dataDir, 'state.db'))
    const row = db.prepare('SELECT value FROM log').get([]) as { value: Uint8Array }
    db.close()
    assert.match(new TextDecoder().decode(row.value), /^apiVersion: v1\nkind: ConfigMap\n/)
    const again = await open(t, dataDir, { codec: yamlCodec })
    assert.deepEqual(await again.get(key('a')), created)
  })

  it('creates a missing data directory, readable by its owner only', async (t) => {
    const dataDir = join(freshDir(), 'nested', 'data')
    await open(t, dataDir)
    assert.ok(existsSync(join(dataDir, 'state.db')))
    assert.equal(statSync(dataDir).mode & 0o777, 0o700)
  })

  it('refuses every call once closed, with Unavailable', async () => {
    const s = await openEmbeddedStore({ dataDir: freshDir() })
    await s.close()
    await s.close()
    await assert.rejects(s.get(key('a')), storageError('Unavailable', 'the embedded store is closed'))
    await assert.rejects(s.create(key('a'), configMap('a')), storageError('Unavailable'))
  })
})

describe('embedded store: the writes of one turn committed together', () => {
  it('gives writes made at once their own revisions in order, acknowledged and watched in that order', async (t) => {
    const store = await openEmbeddedStore({ dataDir: freshDir() })
    t.after(() => store.close())
    await store.create(key('seed'), configMap('seed'))
    const start = await store.currentRevision()
    const watch = store.watch(PREFIX, { resourceVersion: String(start) })
    const names = Array.from({ length: 12 }, (_, i) => `cm-${i}`)
    // Creates, an update and a delete issued in one turn: one batch.
    const written = await Promise.all([
      ...names.map((name) => store.create(key(name), configMap(name))),
      store.guaranteedUpdate(key('seed'), withValue('two')),
    ])
    const revisions = written.map(rv)
    assert.deepEqual(revisions, revisions.map((_, i) => start + 1 + i), 'each write its own revision, in the order issued')
    const removed = await store.delete(key('cm-0'))
    assert.equal(rv(removed), start + written.length + 1)
    assert.deepEqual(await take(watch, written.length + 1), [
      ...names.map((name, i) => `ADDED ${name} ${start + 1 + i}`),
      `MODIFIED seed ${start + 1 + names.length}`,
      `DELETED cm-0 ${start + written.length + 1}`,
    ])
    watch.stop()
    // Two creates of one key in one batch: the second sees the first's row, as it would had the first committed alone.
    const [first, second] = await Promise.allSettled([store.create(key('twice'), configMap('twice')), store.create(key('twice'), configMap('twice', 'two'))])
    assert.equal(first.status, 'fulfilled')
    assert.equal(second.status, 'rejected')
    assert.ok(storageError('KeyExists')((second as PromiseRejectedResult).reason))
  })

  it('fails every write of a batch SQLite cannot store, stores none of them, and goes on from the revision before', async (t) => {
    const path = join(freshDir(), 'state.db')
    mkdirSync(join(path, '..'), { recursive: true })
    const db = openLibsql(path)
    const store = SqlStorage.open(db)
    t.after(() => store.close())
    await store.create(key('before'), configMap('before'))
    const before = await store.currentRevision()
    const watch = store.watch(PREFIX, { resourceVersion: String(before) })
    // A database that may not grow: a full disk, as SQLite sees one.
    const pages = Number(db.prepare('PRAGMA page_count').get()?.['page_count'])
    db.exec(`PRAGMA max_page_count = ${pages}`)
    const big = (name: string) => ({ ...configMap(name), data: { value: 'x'.repeat(64 * 1024) } })
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((name) => store.create(key(name), big(name))))
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    )
    assert.equal(await store.currentRevision(), before)
    assert.equal((await store.list(PREFIX)).items.length, 1)
    // Room again: the next write takes the revision after the last committed one, and the watch sees only it.
    db.exec('PRAGMA max_page_count = 1073741823')
    const after = await store.create(key('after'), configMap('after'))
    assert.equal(rv(after), before + 1)
    assert.deepEqual(await take(watch, 1), [`ADDED after ${before + 1}`])
    watch.stop()
  })
})

describe("embedded store: writes that start from the cache's copy", () => {
  // The guess carries a label the stored row lacks: which of the two an update saw tells whether the row was decoded.
  const marked = (obj: KubeObject): KubeObject => ({ ...obj, metadata: { ...obj.metadata, labels: { from: 'guess' } } })
  const valueOf = (obj: KubeObject | undefined): string => String((obj?.['data'] as Record<string, string> | undefined)?.['value'])

  it('starts an update from a guess of the stored revision, on a copy, and leaves the guess as it was', async (t) => {
    const store = await openEmbeddedStore({ dataDir: freshDir() })
    t.after(() => store.close())
    const stored = await store.create(key('a'), configMap('a'))
    const guess = Object.freeze(marked(stored))
    const seen: Array<Record<string, string> | undefined> = []
    const updated = await store.guaranteedUpdate(
      key('a'),
      (cur) => {
        seen.push(cur.metadata.labels)
        ;(cur.data as Record<string, string>)['value'] = 'two'
        return cur
      },
      { suggestion: guess },
    )
    assert.deepEqual(seen, [{ from: 'guess' }], 'the guess was of the stored revision: the row was not decoded')
    assert.equal(valueOf(guess), 'one')
    assert.equal(valueOf(await store.get(key('a'))), 'two')
    assert.equal(rv(updated), rv(stored) + 1)
  })

  it('reads the row when the guess is of another revision', async (t) => {
    const store = await openEmbeddedStore({ dataDir: freshDir() })
    t.after(() => store.close())
    const first = await store.create(key('a'), configMap('a'))
    await store.guaranteedUpdate(key('a'), withValue('two'))
    const seen: string[] = []
    await store.guaranteedUpdate(
      key('a'),
      (cur) => {
        seen.push(valueOf(cur))
        return { ...cur, data: { value: 'three' } }
      },
      { suggestion: marked(first) },
    )
    assert.deepEqual(seen, ['two'])
  })

  it('answers an update that changes nothing with a copy of the guess it can change, writing nothing', async (t) => {
    const store = await openEmbeddedStore({ dataDir: freshDir() })
    t.after(() => store.close())
    const stored = await store.create(key('a'), configMap('a'))
    const revision = await store.currentRevision()
    const guess = Object.freeze(structuredClone(stored))
    const same = await store.guaranteedUpdate(key('a'), (cur) => cur, { suggestion: guess })
    assert.equal(rv(same), rv(stored))
    assert.equal(await store.currentRevision(), revision)
    assert.ok(!Object.isFrozen(same), 'the answer is the caller\u2019s to change')
    assert.notEqual(same, guess)
  })

  it('deletes from a guess of the stored revision, and from the row when the guess is old', async (t) => {
    const store = await openEmbeddedStore({ dataDir: freshDir() })
    t.after(() => store.close())
    const a = await store.create(key('a'), configMap('a'))
    const deleted = await store.delete(key('a'), { suggestion: Object.freeze(marked(a)) })
    assert.deepEqual(deleted.metadata.labels, { from: 'guess' })
    assert.equal(await store.get(key('a')), undefined)
    const b = await store.create(key('b'), configMap('b'))
    await store.guaranteedUpdate(key('b'), withValue('two'))
    const seen: string[] = []
    const gone = await store.delete(key('b'), { suggestion: marked(b), validate: (cur) => void seen.push(valueOf(cur)) })
    assert.deepEqual(seen, ['two'])
    assert.equal(gone.metadata.labels, undefined)
  })
})

describe('embedded store: refusing to open', () => {
  const opening = (dataDir: string) => openEmbeddedStore({ dataDir })
  const refusal = (path: string, cause: string | RegExp) => (err: unknown) => {
    assert.ok(err instanceof EmbeddedStoreError, `expected an EmbeddedStoreError, got ${String(err)}`)
    const prefix = `cannot open the embedded store at ${path}: `
    assert.ok(err.message.startsWith(prefix), err.message)
    if (typeof cause === 'string') assert.equal(err.message.slice(prefix.length), cause)
    else assert.match(err.message.slice(prefix.length), cause)
    return true
  }

  it('refuses a file that is not a database and leaves its bytes alone', async () => {
    const dataDir = freshDir()
    await opening(dataDir).then((s) => s.close())
    const path = join(dataDir, 'state.db')
    const garbage = new Uint8Array(8192).map((_, i) => (i * 7919) % 251)
    writeFileSync(path, garbage)
    await assert.rejects(opening(dataDir), refusal(path, 'file is not a database'))
    assert.deepEqual(new Uint8Array(readFileSync(path)), garbage)
    assert.deepEqual(readdirSync(dataDir), ['state.db'], 'no journal or other file appeared')
  })

  it('refuses the SQLite database of another program and writes nothing into it', async () => {
    const dataDir = freshDir()
    await opening(dataDir).then((s) => s.close())
    const path = join(dataDir, 'state.db')
    rmSync(path)
    const other = new Database(path)
    other.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
    other.close()
    const before = readFileSync(path)
    await assert.rejects(opening(dataDir), refusal(path, 'it is an SQLite database of another program, not an embedded store'))
    assert.deepEqual(readFileSync(path), before)
  })

  it('refuses a store written in a newer format', async () => {
    const dataDir = freshDir()
    await opening(dataDir).then((s) => s.close())
    const path = join(dataDir, 'state.db')
    const db = new Database(path)
    db.exec('PRAGMA user_version = 99')
    db.close()
    await assert.rejects(opening(dataDir), refusal(path, 'it was written by a newer version (format 99; this version reads formats up to 1)'))
  })

  it('refuses a data directory that cannot be made, naming the cause', async () => {
    const parent = freshDir()
    mkdirSync(parent)
    const blocker = join(parent, 'a-file')
    writeFileSync(blocker, 'not a directory')
    const dataDir = join(blocker, 'data')
    await assert.rejects(opening(dataDir), refusal(join(dataDir, 'state.db'), /^ENOTDIR: not a directory/))
    assert.equal(readFileSync(blocker, 'utf8'), 'not a directory')
  })

  it('refuses a database path it cannot open as a file', async () => {
    const dataDir = freshDir()
    const path = join(dataDir, 'state.db')
    mkdirSync(path, { recursive: true })
    await assert.rejects(opening(dataDir), refusal(path, 'unable to open database file'))
    assert.deepEqual(readdirSync(path), [])
  })

  it('refuses a second store on the same data directory while the first is open, then allows it once closed', async (t) => {
    const dataDir = freshDir()
    const path = join(dataDir, 'state.db')
    const first = await openEmbeddedStore({ dataDir })
    const created = await first.create(key('a'), configMap('a'))
    await assert.rejects(opening(dataDir), refusal(path, 'database is locked (another process has it open)'))
    assert.deepEqual(await first.get(key('a')), created, 'the first store is unharmed')
    await first.close()

    // A reopened store holds the lock from the start, before it writes anything.
    const reopened = await open(t, dataDir)
    await assert.rejects(opening(dataDir), refusal(path, 'database is locked (another process has it open)'))
    await reopened.close()
    const third = await open(t, dataDir)
    assert.deepEqual(await third.get(key('a')), created)
  })
})

// The store holds every Secret: its files are the owner's alone, as etcd makes its own, even in a
// data directory someone made beforehand open to every user of the machine.
describe('embedded store file modes', () => {
  const modeOf = (file: string) => statSync(file).mode & 0o777

  it('creates state.db, its log and its index 0600 in a data directory made 0755 beforehand', async () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o755 })
    const store = await openEmbeddedStore({ dataDir: dir })
    try {
      await store.create(key('secret-ish'), configMap('secret-ish', 'TOPSECRETMARKER'))
      const files = readdirSync(dir).filter((f) => f.startsWith('state.db'))
      assert.ok(files.includes('state.db') && files.includes('state.db-wal'), files.join(', '))
      for (const file of files) assert.equal(modeOf(join(dir, file)), 0o600, file)
    } finally {
      await store.close()
    }
  })

  it('makes files an earlier start left readable by others 0600 again', async () => {
    const dir = freshDir()
    await (await openEmbeddedStore({ dataDir: dir })).close()
    chmodSync(join(dir, 'state.db'), 0o644)
    const store = await openEmbeddedStore({ dataDir: dir })
    try {
      assert.equal(modeOf(join(dir, 'state.db')), 0o600)
    } finally {
      await store.close()
    }
  })
})
