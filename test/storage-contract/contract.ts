/**
 * The storage contract suite (docs/architecture.md): written against the
 * Storage interface only, so memory, the embedded store and etcd all run the
 * same cases. Assertions compare revisions with each other, never with fixed
 * numbers, so a backend whose revision counter is shared (etcd) still passes.
 */
import assert from 'node:assert/strict'
import util from 'node:util'
import { describe, it, type TestContext } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { createOneByOne } from '../../core/storage/create-many.js'
import { MAX_STORED_VALUE_BYTES } from '../../core/storage/errors.js'
import {
  type ListResult,
  type Storage,
  StorageError,
  type StorageErrorCode,
  type StorageEvent,
  type Watcher,
} from '../../core/storage/interface.js'

export interface StorageContractHooks<S extends Storage> {
  /**
   * Discards the store's history up to its current revision (etcd: a
   * compaction at the current revision). Without it the compaction cases are skipped.
   */
  compact?: (storage: S) => Promise<void>
  /**
   * A read at resourceVersion "0", or not older than a revision, may answer
   * with a state before the caller's last write (a watch cache that hears of
   * writes through a watch, as upstream's); it is still a state the key had
   * that the read allows.
   */
  readsMayLag?: boolean
}

const PREFIX = '/registry/pods/'
const key = (name: string, ns = 'ns') => `${PREFIX}${ns}/${name}`

function pod(name: string, labels?: Record<string, string>, image = 'nginx:1', namespace = 'ns'): KubeObject {
  const metadata: KubeObject['metadata'] = { name, namespace, uid: `uid-${name}` }
  if (labels) metadata.labels = labels
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { image } }
}

/** A pod whose annotation makes its stored value about `bytes` long (the rest is well under a kilobyte, in any codec). */
function podOfSize(name: string, bytes: number): KubeObject {
  const obj = pod(name)
  obj.metadata.annotations = { blob: 'x'.repeat(bytes) }
  return obj
}

function withImage(obj: KubeObject, image: string): KubeObject {
  return { ...obj, spec: { image } }
}

function withLabels(obj: KubeObject, labels: Record<string, string>): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, labels } }
}

function rv(obj: KubeObject | undefined): number {
  const text = obj?.metadata.resourceVersion
  assert.ok(text !== undefined && /^[1-9]\d*$/.test(text), `resourceVersion ${String(text)} is a decimal revision`)
  return Number(text)
}

function names(items: readonly KubeObject[]): string[] {
  return items.map((o) => o.metadata.name ?? '')
}

function isStorageError(code: StorageErrorCode) {
  return (err: unknown) => {
    assert.ok(err instanceof StorageError, `expected a StorageError, got ${String(err)}`)
    assert.equal(err.code, code)
    return true
  }
}

/** Any wait in this suite is bounded, so a missing event fails the test instead of hanging it. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Reads a watch one event at a time. */
function reader(w: Watcher) {
  const it = w[Symbol.asyncIterator]()
  return {
    async next(): Promise<StorageEvent> {
      const r = await within(it.next(), 'a watch event')
      assert.equal(r.done, false, 'the watch ended early')
      return r.value as StorageEvent
    },
    async take(n: number): Promise<StorageEvent[]> {
      const out: StorageEvent[] = []
      for (let i = 0; i < n; i++) out.push(await this.next())
      return out
    },
    async ended(): Promise<boolean> {
      const r = await within(it.next(), 'the watch to end')
      return r.done === true
    },
    raw: it,
  }
}

/** A relaxed read ("0", not older than) must still be one true state: the one an exact read at its revision gives. */
async function sameAsExactRead(s: Storage, result: ListResult, predicate?: (o: KubeObject) => boolean): Promise<void> {
  const exact = await s.list(PREFIX, { resourceVersion: String(result.revision), resourceVersionMatch: 'Exact', ...(predicate ? { predicate } : {}) })
  assert.deepEqual(result.items, exact.items, `the items are the state at revision ${result.revision}`)
}

/** The backend's createMany, or one create after the other where it has none. */
const createMany = (s: Storage, objects: readonly (readonly [string, KubeObject])[]): Promise<number[]> => (s.createMany ? s.createMany(objects) : createOneByOne(s, objects))

function summary(events: readonly StorageEvent[]): string[] {
  return events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`)
}

export function runStorageContract<S extends Storage>(
  name: string,
  makeStorage: () => Promise<S>,
  hooks: StorageContractHooks<S> = {},
): void {
  async function open(t: TestContext): Promise<S> {
    const s = await makeStorage()
    t.after(() => s.close())
    return s
  }

  describe(`storage contract: ${name}`, () => {
    describe('revisions', () => {
      it('gives every write a higher revision and reports it as the object resourceVersion string', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const a = await s.create(key('a'), pod('a'))
        const b = await s.create(key('b'), pod('b'))
        const a2 = await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        const gone = await s.delete(key('b'))
        const seen = [rv(a), rv(b), rv(a2), rv(gone)]
        assert.ok(seen[0]! > start, 'the first write moves past the starting revision')
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `write ${i} is newer than write ${i - 1}`)
        assert.equal(await s.currentRevision(), seen[3])
      })

      it('does not move the revision on reads', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const before = await s.currentRevision()
        await s.get(key('a'))
        await s.list(PREFIX)
        await s.count(PREFIX)
        assert.equal(await s.currentRevision(), before)
      })
    })

    describe('create and get', () => {
      it('stores a new object and reads it back with the same resourceVersion', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a', { app: 'web' }))
        assert.deepEqual(created.spec, { image: 'nginx:1' })
        assert.deepEqual(created.metadata.labels, { app: 'web' })
        assert.deepEqual(await s.get(key('a')), created)
      })

      it('refuses a create at an existing key with KeyExists and keeps the stored object', async (t) => {
        const s = await open(t)
        const first = await s.create(key('a'), pod('a'))
        const revision = await s.currentRevision()
        await assert.rejects(s.create(key('a'), pod('a', undefined, 'other:9')), isStorageError('KeyExists'))
        assert.deepEqual(await s.get(key('a')), first)
        assert.equal(await s.currentRevision(), revision, 'a refused create writes nothing')
      })

      it('creates many objects at once where their keys are free, each a write of its own revision', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const w = reader(s.watch(PREFIX, { resourceVersion: String(start) }))
        const objects = ['m1', 'm2', 'm3'].map((name) => [key(name), pod(name)] as const)
        const revisions = await createMany(s, objects)
        // In any order (a backend may write them side by side), each at a revision of its own.
        const events = await w.take(3)
        assert.deepEqual(summary(events).sort(), ['ADDED m1', 'ADDED m2', 'ADDED m3'])
        assert.deepEqual(
          events.map((e) => e.revision),
          [start + 1, start + 2, start + 3],
        )
        for (const event of events) {
          const stored = await s.get(key(event.object.metadata.name!))
          assert.deepEqual(stored?.spec, { image: 'nginx:1' })
          assert.deepEqual(stored, event.object)
          // The answer names each object's revision, in the order the objects were given.
          const given = objects.findIndex(([k]) => k === key(event.object.metadata.name!))
          assert.equal(revisions[given], event.revision)
        }
        assert.equal(await s.currentRevision(), start + 3)
      })

      it('creates many objects of several kinds, never two of one kind at one revision', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const CM_PREFIX = '/registry/configmaps/'
        const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-cm-${name}` }, data: { a: name } })
        const pods = reader(s.watch(PREFIX, { resourceVersion: String(start) }))
        const configMaps = reader(s.watch(CM_PREFIX, { resourceVersion: String(start) }))
        const objects = [
          [key('k1'), pod('k1')],
          [`${CM_PREFIX}ns/c1`, configMap('c1')],
          [key('k2'), pod('k2')],
          [`${CM_PREFIX}ns/c2`, configMap('c2')],
          [key('k3'), pod('k3')],
        ] as const
        const revisions = await createMany(s, objects)
        assert.ok(revisions.every((r) => r > start), `every object created: ${revisions.join(', ')}`)
        // Each watch sees each of its objects, at revisions that rise (a watch cache takes one revision for one change).
        for (const [watch, names] of [
          [pods, ['k1', 'k2', 'k3']],
          [configMaps, ['c1', 'c2']],
        ] as const) {
          const events = await watch.take(names.length)
          assert.deepEqual(summary(events).sort(), names.map((n) => `ADDED ${n}`))
          for (let i = 1; i < events.length; i++) assert.ok(events[i]!.revision > events[i - 1]!.revision, `revisions rise: ${events.map((e) => e.revision).join(', ')}`)
          for (const event of events) assert.equal(revisions[objects.findIndex(([k]) => k.endsWith(`/${event.object.metadata.name!}`))], event.revision)
        }
        // The store moved on by the writes' revisions, shared or not.
        assert.equal(await s.currentRevision(), Math.max(...revisions))
        assert.equal(Math.max(...revisions) - start, new Set(revisions).size)
      })

      it('creates many large objects of several kinds (no request of them too large for the store)', async (t) => {
        const s = await open(t)
        const kinds = ['ConfigMap', 'Secret', 'ServiceAccount', 'Event']
        // Each some 450 kB: together over etcd's default limit of a request (1.5 MiB).
        const objects = kinds.map((kind) => [`/registry/${kind.toLowerCase()}s/ns/big`, { apiVersion: 'v1', kind, metadata: { name: 'big', namespace: 'ns' }, data: { big: 'x'.repeat(450_000) } }] as const)
        const revisions = await createMany(s, objects)
        assert.ok(revisions.every((r) => r > 0), `every object created: ${revisions.join(', ')}`)
        for (const [key] of objects) assert.equal(((await s.get(key))?.['data'] as { big: string }).big.length, 450_000)
      })

      it('stops creating many at a key taken, and leaves that key as it was', async (t) => {
        const s = await open(t)
        const taken = await s.create(key('m2'), pod('m2', undefined, 'theirs:1'))
        const objects = ['m1', 'm2', 'm3'].map((name) => [key(name), pod(name)] as const)
        const revisions = await createMany(s, objects)
        const created = revisions.filter((r) => r > 0).length
        assert.ok(created < 3)
        assert.equal(revisions[1], 0, 'the taken key is not reported created')
        assert.deepEqual(await s.get(key('m2')), taken)
        // What was created holds the objects as given.
        const present = (await s.list(PREFIX)).items.filter((o) => o.metadata.name !== 'm2')
        assert.equal(present.length, created)
        for (const obj of present) assert.deepEqual(obj.spec, { image: 'nginx:1' })
        assert.equal(await s.currentRevision(), rv(taken) + created)
      })

      it('answers undefined for a key never written and for a deleted one', async (t) => {
        const s = await open(t)
        assert.equal(await s.get(key('never')), undefined)
        await s.create(key('a'), pod('a'))
        await s.delete(key('a'))
        assert.equal(await s.get(key('a')), undefined)
      })

      it('reads a key as it was at an older revision with resourceVersionMatch Exact', async (t) => {
        const s = await open(t)
        const v1 = await s.create(key('a'), pod('a'))
        const v2 = await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        const old = await s.get(key('a'), { resourceVersion: String(rv(v1)), resourceVersionMatch: 'Exact' })
        assert.deepEqual(old, v1)
        const latest = await s.get(key('a'), { resourceVersion: String(rv(v1)), resourceVersionMatch: 'NotOlderThan' })
        const zero = await s.get(key('a'), { resourceVersion: '0' })
        if (hooks.readsMayLag) {
          // Either state is a right answer: both are at least as new as v1, and "0" asks for any.
          for (const read of [latest, zero]) assert.ok([v1, v2].some((state) => util.isDeepStrictEqual(read, state)), 'a state the key had')
        } else {
          assert.deepEqual(latest?.spec, { image: 'nginx:2' })
          assert.deepEqual(zero?.spec, { image: 'nginx:2' })
        }
      })

      it('refuses a resourceVersion newer than the store with TooLargeResourceVersion', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const future = String((await s.currentRevision()) + 1000)
        await assert.rejects(s.get(key('a'), { resourceVersion: future }), isStorageError('TooLargeResourceVersion'))
        await assert.rejects(s.list(PREFIX, { resourceVersion: future }), isStorageError('TooLargeResourceVersion'))
      })

      it('refuses a resourceVersion that is not a number with InvalidResourceVersion', async (t) => {
        const s = await open(t)
        await assert.rejects(s.get(key('a'), { resourceVersion: 'abc' }), isStorageError('InvalidResourceVersion'))
        await assert.rejects(s.list(PREFIX, { resourceVersion: '-1' }), isStorageError('InvalidResourceVersion'))
        // A watch too, and never as a watch from now (which would wait, silent, for the next change).
        const watchFrom = async (resourceVersion: string) => {
          const w = s.watch(PREFIX, { resourceVersion })
          try {
            await within(w[Symbol.asyncIterator]().next(), 'the watch to fail')
          } finally {
            w.stop()
          }
        }
        await assert.rejects(watchFrom('abc'), isStorageError('InvalidResourceVersion'))
        await assert.rejects(watchFrom('1.5'), isStorageError('InvalidResourceVersion'))
      })
    })

    describe('list', () => {
      it('lists the objects under a prefix in key order and nothing outside it', async (t) => {
        const s = await open(t)
        for (const n of ['c', 'a', 'b']) await s.create(key(n), pod(n))
        await s.create(key('z', 'another'), pod('z', undefined, 'nginx:1', 'another'))
        await s.create('/registry/podsx/ns/outside', pod('outside'))
        await s.create('/registry/pod', pod('shorter'))
        const list = await s.list(PREFIX)
        assert.deepEqual(names(list.items), ['z', 'a', 'b', 'c'])
        assert.equal(list.revision, await s.currentRevision())
        assert.equal(list.continue, undefined)
        assert.deepEqual(names((await s.list(`${PREFIX}ns/`)).items), ['a', 'b', 'c'])
      })

      it('pages with limit and continue and says how many items remain', async (t) => {
        const s = await open(t)
        for (const n of ['a', 'b', 'c', 'd', 'e']) await s.create(key(n), pod(n))
        const p1 = await s.list(PREFIX, { limit: 2 })
        assert.deepEqual(names(p1.items), ['a', 'b'])
        assert.equal(p1.remainingItemCount, 3)
        assert.ok(p1.continue)
        const p2 = await s.list(PREFIX, { limit: 2, continue: p1.continue })
        assert.deepEqual(names(p2.items), ['c', 'd'])
        assert.equal(p2.remainingItemCount, 1)
        assert.equal(p2.revision, p1.revision)
        const p3 = await s.list(PREFIX, { limit: 2, continue: p2.continue! })
        assert.deepEqual(names(p3.items), ['e'])
        assert.equal(p3.continue, undefined)
        assert.equal(p3.remainingItemCount, undefined)
      })

      it('gives no continue token when a page ends exactly at the last object', async (t) => {
        const s = await open(t)
        for (const n of ['a', 'b']) await s.create(key(n), pod(n))
        const page = await s.list(PREFIX, { limit: 2 })
        assert.deepEqual(names(page.items), ['a', 'b'])
        assert.equal(page.continue, undefined)
      })

      it('serves later pages from the first page snapshot even when objects change in between', async (t) => {
        const s = await open(t)
        for (const n of ['a', 'b', 'c', 'd']) await s.create(key(n), pod(n))
        const p1 = await s.list(PREFIX, { limit: 2 })
        await s.delete(key('c'))
        await s.guaranteedUpdate(key('d'), (cur) => withImage(cur, 'nginx:2'))
        await s.create(key('bb'), pod('bb'))
        await s.create(key('e'), pod('e'))
        const p2 = await s.list(PREFIX, { continue: p1.continue! })
        assert.deepEqual(names(p2.items), ['c', 'd'], 'the page shows the first page snapshot')
        assert.deepEqual(p2.items[1]?.spec, { image: 'nginx:1' })
        assert.equal(p2.revision, p1.revision)
        const fresh = await s.list(PREFIX)
        assert.deepEqual(names(fresh.items), ['a', 'b', 'bb', 'd', 'e'])
      })

      it('fills each page with matching items when filtering, without a remaining count', async (t) => {
        const s = await open(t)
        const app = (i: number) => (i % 3 === 0 ? 'web' : 'db')
        for (let i = 0; i < 9; i++) await s.create(key(`p${i}`), pod(`p${i}`, { app: app(i) }))
        const predicate = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
        const p1 = await s.list(PREFIX, { limit: 2, predicate })
        assert.deepEqual(names(p1.items), ['p0', 'p3'])
        assert.equal(p1.remainingItemCount, undefined)
        assert.ok(p1.continue)
        const p2 = await s.list(PREFIX, { limit: 2, predicate, continue: p1.continue })
        assert.deepEqual(names(p2.items), ['p6'])
        assert.equal(p2.continue, undefined)
      })

      it('reads a whole list as it was at an exact older revision', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const b = await s.create(key('b'), pod('b'))
        await s.delete(key('a'))
        await s.create(key('c'), pod('c'))
        const old = await s.list(PREFIX, { resourceVersion: String(rv(b)), resourceVersionMatch: 'Exact' })
        assert.deepEqual(names(old.items), ['a', 'b'])
        assert.equal(old.revision, rv(b))
        const notOlder = await s.list(PREFIX, { resourceVersion: String(rv(b)), resourceVersionMatch: 'NotOlderThan' })
        assert.ok(notOlder.revision >= rv(b), 'not older than asked')
        await sameAsExactRead(s, notOlder)
      })

      it('continues a token of any negative revision at the latest one, as upstream reads every revision below zero', async (t) => {
        const s = await open(t)
        for (const n of ['a', 'b', 'c']) await s.create(key(n), pod(n))
        await s.delete(key('b'))
        const token = (rv: number) => btoa(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: 'ns/b' })).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
        for (const rv of [-1, -5, -(2 ** 53 - 1)]) {
          const page = await s.list(PREFIX, { continue: token(rv) })
          assert.deepEqual(names(page.items), ['c'], `rv ${rv}`)
          assert.equal(page.revision, await s.currentRevision(), `rv ${rv}`)
        }
      })

      it('refuses a continue token it cannot read, or one that leaves the listed prefix, with InvalidContinue', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const revision = await s.currentRevision()
        const token = (body: object) =>
          btoa(JSON.stringify(body)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
        for (const bad of [
          'not a token!',
          token({ v: 'meta.k8s.io/v1', rv: revision, start: '../secrets/ns/x' }),
          token({ v: 'meta.k8s.io/v1', rv: revision, start: '' }),
          token({ v: 'meta.k8s.io/v1', rv: 0, start: 'ns/a' }),
          token({ v: 'other/v9', rv: revision, start: 'ns/a' }),
        ]) {
          await assert.rejects(s.list(PREFIX, { limit: 1, continue: bad }), isStorageError('InvalidContinue'), bad)
        }
      })

      it('answers resourceVersion "0" with one complete state, the one at the revision it reports', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a', { app: 'web' }))
        await s.create(key('b'), pod('b', { app: 'db' }))
        await s.delete(key('b'))
        await s.create(key('c'), pod('c', { app: 'web' }))
        await sameAsExactRead(s, await s.list(PREFIX, { resourceVersion: '0' }))
        const predicate = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
        await sameAsExactRead(s, await s.list(PREFIX, { resourceVersion: '0', predicate }), predicate)
      })

      it('answers a not-older-than read with a state that includes the write it names', async (t) => {
        const s = await open(t)
        const a = await s.create(key('a'), pod('a'))
        for (const match of ['NotOlderThan', undefined] as const) {
          const list = await s.list(PREFIX, { resourceVersion: String(rv(a)), ...(match ? { resourceVersionMatch: match } : {}) })
          assert.ok(list.revision >= rv(a), `revision ${list.revision} is not older than ${rv(a)}`)
          assert.deepEqual(names(list.items), ['a'])
        }
      })

      it('answers a not-older-than read of a revision that a write under another prefix made', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const elsewhere = await s.create('/registry/services/ns/x', pod('x'))
        const list = await s.list(PREFIX, { resourceVersion: String(rv(elsewhere)), resourceVersionMatch: 'NotOlderThan' })
        assert.ok(list.revision >= rv(elsewhere))
        assert.deepEqual(names(list.items), ['a'])
      })

      it('counts the objects under a prefix', async (t) => {
        const s = await open(t)
        assert.equal(await s.count(PREFIX), 0)
        for (const n of ['a', 'b', 'c']) await s.create(key(n), pod(n))
        await s.create('/registry/services/ns/a', pod('a'))
        await s.delete(key('b'))
        assert.equal(await s.count(PREFIX), 2)
      })
    })

    describe('value size', () => {
      it('refuses a create whose value is over etcd\'s default request limit, storing nothing', async (t) => {
        const s = await open(t)
        const revision = await s.currentRevision()
        await assert.rejects(s.create(key('big'), podOfSize('big', MAX_STORED_VALUE_BYTES + 1)), isStorageError('RequestTooLarge'))
        assert.equal(await s.get(key('big')), undefined)
        assert.equal(await s.currentRevision(), revision, 'a refused create writes nothing')
      })

      it('stores a value just under the limit', async (t) => {
        const s = await open(t)
        const created = await s.create(key('near'), podOfSize('near', MAX_STORED_VALUE_BYTES - 4096))
        assert.deepEqual(await s.get(key('near')), created)
      })

      it('refuses an update that grows the value over the limit, keeping the old version', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        await assert.rejects(
          s.guaranteedUpdate(key('a'), (cur) => ({ ...cur, metadata: { ...cur.metadata, annotations: { blob: 'x'.repeat(MAX_STORED_VALUE_BYTES + 1) } } })),
          isStorageError('RequestTooLarge'),
        )
        assert.deepEqual(await s.get(key('a')), created)
      })
    })

    describe('guaranteedUpdate', () => {
      it('stores what tryUpdate returns under a new resourceVersion', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        let given: KubeObject | undefined
        const updated = await s.guaranteedUpdate(key('a'), (cur) => {
          given = cur
          return withImage(cur, 'nginx:2')
        })
        assert.deepEqual(given, created, 'tryUpdate sees the stored object')
        assert.ok(rv(updated) > rv(created))
        assert.deepEqual(updated.spec, { image: 'nginx:2' })
        assert.deepEqual(await s.get(key('a')), updated)
      })

      it('fails with KeyNotFound for a missing key and stores nothing', async (t) => {
        const s = await open(t)
        let called = false
        await assert.rejects(
          s.guaranteedUpdate(key('missing'), (cur) => {
            called = true
            return cur
          }),
          isStorageError('KeyNotFound'),
        )
        assert.equal(called, false)
        assert.equal(await s.get(key('missing')), undefined)
      })

      it('fails with PreconditionFailed when the uid or resourceVersion differs, leaving the object alone', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        const change = (cur: KubeObject) => withImage(cur, 'nginx:2')
        await assert.rejects(s.guaranteedUpdate(key('a'), change, { preconditions: { uid: 'other' } }), (err: unknown) => {
          isStorageError('PreconditionFailed')(err)
          assert.match(String((err as Error).message), /Precondition failed: UID in precondition: other, UID in object meta: uid-a/)
          return true
        })
        await assert.rejects(
          s.guaranteedUpdate(key('a'), change, { preconditions: { resourceVersion: String(rv(created) + 1000) } }),
          isStorageError('PreconditionFailed'),
        )
        assert.deepEqual(await s.get(key('a')), created)
        const ok = await s.guaranteedUpdate(key('a'), change, {
          preconditions: { uid: 'uid-a', resourceVersion: created.metadata.resourceVersion! },
        })
        assert.deepEqual(ok.spec, { image: 'nginx:2' })
      })

      it('retries with the fresh object when another write lands while tryUpdate runs', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const seen: string[] = []
        const result = await s.guaranteedUpdate(key('a'), async (cur) => {
          seen.push(JSON.stringify(cur.metadata.labels ?? {}))
          if (seen.length === 1) {
            await s.guaranteedUpdate(key('a'), (other) => withLabels(other, { by: 'someone-else' }))
          }
          return withImage(cur, 'nginx:2')
        })
        assert.deepEqual(seen, ['{}', '{"by":"someone-else"}'], 'the second attempt starts from the concurrent write')
        assert.deepEqual(result.metadata.labels, { by: 'someone-else' })
        assert.deepEqual(result.spec, { image: 'nginx:2' })
        assert.deepEqual(await s.get(key('a')), result)
      })

      it('keeps the resourceVersion and writes nothing when the update changes nothing', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        const w = reader(s.watch(PREFIX, { resourceVersion: created.metadata.resourceVersion! }))
        const same = await s.guaranteedUpdate(key('a'), (cur) => ({ ...cur }))
        assert.deepEqual(same, created)
        assert.equal(await s.currentRevision(), rv(created))
        await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        const first = await w.next()
        assert.equal(first.type, 'MODIFIED')
        assert.deepEqual(first.object.spec, { image: 'nginx:2' }, 'the no-op produced no event')
      })

      it('answers a reader alone (readOnly) what is stored, with or without a change, and never lets it change the store', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        const same = await s.guaranteedUpdate(key('a'), (cur) => ({ ...cur }), { readOnly: true })
        assert.deepEqual(same, created)
        assert.equal(await s.currentRevision(), rv(created), 'nothing written')
        const changed = await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'), { readOnly: true })
        assert.deepEqual(changed, await s.get(key('a')))
        assert.equal(rv(changed), rv(created) + 1)
        // What a reader got may be the store's own frozen object: a change to it is refused or goes nowhere.
        try {
          changed.metadata.name = 'changed'
        } catch {
          // Frozen.
        }
        assert.equal((await s.get(key('a')))?.metadata.name, 'a')
      })

      it('passes on an error thrown by tryUpdate and stores nothing', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        await assert.rejects(
          s.guaranteedUpdate(key('a'), () => {
            throw new Error('refused by admission')
          }),
          /refused by admission/,
        )
        assert.deepEqual(await s.get(key('a')), created)
      })
    })

    describe('delete', () => {
      it('removes the object and returns its last state at the deletion revision', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        const deleted = await s.delete(key('a'))
        assert.ok(rv(deleted) > rv(created))
        assert.equal(rv(deleted), await s.currentRevision())
        assert.deepEqual(deleted.spec, created.spec)
        assert.equal(await s.get(key('a')), undefined)
      })

      it('fails with KeyNotFound for a missing key', async (t) => {
        const s = await open(t)
        await assert.rejects(s.delete(key('missing')), isStorageError('KeyNotFound'))
      })

      it('keeps the object when a precondition fails or validate refuses', async (t) => {
        const s = await open(t)
        const created = await s.create(key('a'), pod('a'))
        await assert.rejects(s.delete(key('a'), { preconditions: { uid: 'other' } }), isStorageError('PreconditionFailed'))
        await assert.rejects(
          s.delete(key('a'), { preconditions: { resourceVersion: String(rv(created) + 1000) } }),
          isStorageError('PreconditionFailed'),
        )
        let validated: KubeObject | undefined
        await assert.rejects(
          s.delete(key('a'), {
            validate: (cur) => {
              validated = cur
              throw new Error('has finalizers')
            },
          }),
          /has finalizers/,
        )
        assert.deepEqual(validated, created)
        assert.deepEqual(await s.get(key('a')), created)
        await s.delete(key('a'), { preconditions: { uid: 'uid-a' }, validate: async () => {} })
        assert.equal(await s.get(key('a')), undefined)
      })

      it('validates against the fresh object when a write lands during validate', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const seen: string[] = []
        const deleted = await s.delete(key('a'), {
          validate: async (cur) => {
            seen.push(String((cur.spec as { image: string }).image))
            if (seen.length === 1) await s.guaranteedUpdate(key('a'), (o) => withImage(o, 'nginx:2'))
          },
        })
        assert.deepEqual(seen, ['nginx:1', 'nginx:2'])
        assert.deepEqual(deleted.spec, { image: 'nginx:2' })
      })
    })

    describe('watch', () => {
      it('replays every change after a resourceVersion, then continues with live changes', async (t) => {
        const s = await open(t)
        const a = await s.create(key('a'), pod('a'))
        const a2 = await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        const b = await s.create(key('b'), pod('b'))
        const gone = await s.delete(key('a'))
        const w = reader(s.watch(PREFIX, { resourceVersion: a.metadata.resourceVersion! }))
        const replay = await w.take(3)
        assert.deepEqual(summary(replay), ['MODIFIED a', 'ADDED b', 'DELETED a'])
        assert.deepEqual(replay[0]?.object, a2)
        assert.deepEqual(replay[1]?.object, b)
        assert.deepEqual(replay[2]?.object, gone, 'a deletion carries the last state at the deletion revision')
        assert.deepEqual(
          replay.map((e) => e.revision),
          [rv(a2), rv(b), rv(gone)],
        )
        const c = await s.create(key('c'), pod('c'))
        const live = await w.next()
        assert.equal(live.type, 'ADDED')
        assert.deepEqual(live.object, c)
        assert.equal(live.revision, rv(c))
      })

      it('starts with ADDED events for the current objects when no resourceVersion is given', async (t) => {
        const s = await open(t)
        const a = await s.create(key('a'), pod('a'))
        await s.create(key('b'), pod('b'))
        await s.delete(key('b'))
        await s.create(key('c'), pod('c'))
        for (const resourceVersion of [undefined, '', '0']) {
          const w = s.watch(PREFIX, resourceVersion === undefined ? {} : { resourceVersion })
          const r = reader(w)
          const initial = await r.take(2)
          assert.deepEqual(summary(initial), ['ADDED a', 'ADDED c'], `resourceVersion ${String(resourceVersion)}`)
          assert.deepEqual(initial[0]?.object, a)
          assert.equal(initial[0]?.revision, rv(a))
          w.stop()
        }
        const w = reader(s.watch(PREFIX))
        await w.take(2)
        await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        assert.deepEqual(summary([await w.next()]), ['MODIFIED a'])
      })

      it('watches exactly one key when given a key without a trailing slash', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const w = reader(s.watch(key('a'), { resourceVersion: String(start) }))
        await s.create(key('ab'), pod('ab'))
        await s.create(key('b'), pod('b'))
        await s.create(key('a'), pod('a'))
        assert.deepEqual(summary([await w.next()]), ['ADDED a'])
        const initial = reader(s.watch(key('a')))
        assert.deepEqual(summary([await initial.next()]), ['ADDED a'])
      })

      it('reports objects entering the selection as ADDED and leaving it as DELETED', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const predicate = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
        const w = reader(s.watch(PREFIX, { resourceVersion: String(start), predicate }))
        await s.create(key('x'), pod('x', { app: 'db' })) // never matched: not seen
        await s.guaranteedUpdate(key('x'), (cur) => withLabels(cur, { app: 'web' })) // enters
        await s.guaranteedUpdate(key('x'), (cur) => withImage(cur, 'nginx:2')) // stays
        const before = await s.get(key('x'))
        const left = await s.guaranteedUpdate(key('x'), (cur) => withLabels(cur, { app: 'db' })) // leaves
        await s.delete(key('x')) // gone while not matching: not seen
        await s.create(key('marker'), pod('marker', { app: 'web' }))
        const events = await w.take(4)
        assert.deepEqual(summary(events), ['ADDED x', 'MODIFIED x', 'DELETED x', 'ADDED marker'])
        const leaving = events[2]!
        assert.deepEqual(leaving.object.metadata.labels, { app: 'web' }, 'the DELETED shows the last matching state')
        assert.deepEqual(leaving.object.spec, before?.spec)
        assert.equal(leaving.object.metadata.resourceVersion, left.metadata.resourceVersion)
        assert.equal(leaving.revision, rv(left))
      })

      it('applies the selection to changes it replays from an older resourceVersion', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const predicate = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
        await s.create(key('x'), pod('x', { app: 'db' }))
        await s.guaranteedUpdate(key('x'), (cur) => withLabels(cur, { app: 'web' }))
        await s.guaranteedUpdate(key('x'), (cur) => withImage(cur, 'nginx:2'))
        const left = await s.guaranteedUpdate(key('x'), (cur) => withLabels(cur, { app: 'db' }))
        await s.delete(key('x'))
        await s.create(key('marker'), pod('marker', { app: 'web' }))
        const w = reader(s.watch(PREFIX, { resourceVersion: String(start), predicate }))
        const events = await w.take(4)
        assert.deepEqual(summary(events), ['ADDED x', 'MODIFIED x', 'DELETED x', 'ADDED marker'])
        assert.deepEqual(events[2]!.object.metadata.labels, { app: 'web' })
        assert.equal(events[2]!.object.metadata.resourceVersion, left.metadata.resourceVersion)
      })

      it('filters the initial state by the predicate too', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a', { app: 'db' }))
        await s.create(key('b'), pod('b', { app: 'web' }))
        const predicate = (o: KubeObject) => o.metadata.labels?.['app'] === 'web'
        const w = reader(s.watch(PREFIX, { predicate }))
        await s.create(key('c'), pod('c', { app: 'web' }))
        assert.deepEqual(summary(await w.take(2)), ['ADDED b', 'ADDED c'])
      })

      it('sends BOOKMARK events carrying the current revision when asked to', async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        const current = await s.currentRevision()
        const w = s.watch(PREFIX, { resourceVersion: String(current), bookmarks: true, bookmarkIntervalMs: 5 })
        t.after(() => w.stop())
        const event = await reader(w).next()
        assert.equal(event.type, 'BOOKMARK')
        assert.deepEqual(event.object, { metadata: { resourceVersion: String(current) } })
        assert.equal(event.revision, current)
      })

      it('sends no BOOKMARK events unless asked to', async (t) => {
        const s = await open(t)
        const start = await s.currentRevision()
        const w = reader(s.watch(PREFIX, { resourceVersion: String(start), bookmarkIntervalMs: 1 }))
        await new Promise((resolve) => setTimeout(resolve, 20))
        await s.create(key('a'), pod('a'))
        assert.equal((await w.next()).type, 'ADDED')
      })

      it('ends the iteration when stopped, even while a consumer waits', async (t) => {
        const s = await open(t)
        const w = s.watch(PREFIX, { resourceVersion: String(await s.currentRevision()) })
        const r = reader(w)
        const pending = r.raw.next()
        w.stop()
        assert.equal((await within(pending, 'the pending read to end')).done, true)
        await s.create(key('a'), pod('a'))
        assert.equal(await r.ended(), true, 'no events after stop')
      })

      it('ends the iteration when its signal aborts, and when a for-await loop breaks', async (t) => {
        const s = await open(t)
        const controller = new AbortController()
        const w = s.watch(PREFIX, { signal: controller.signal })
        const r = reader(w)
        const pending = r.raw.next()
        controller.abort()
        assert.equal((await within(pending, 'the aborted watch to end')).done, true)

        const aborted = new AbortController()
        aborted.abort()
        assert.equal(await reader(s.watch(PREFIX, { signal: aborted.signal })).ended(), true)

        await s.create(key('a'), pod('a'))
        await s.create(key('b'), pod('b'))
        const looped = s.watch(PREFIX)
        const seen: string[] = []
        for await (const event of looped) {
          seen.push(event.object.metadata.name ?? '')
          break
        }
        assert.deepEqual(seen, ['a'])
        assert.equal(await reader(looped).ended(), true, 'breaking out stopped the watch')
      })

      it('ends every watch when the store closes', async () => {
        const s = await makeStorage()
        const w1 = reader(s.watch(PREFIX))
        const w2 = reader(s.watch(key('a'), { resourceVersion: String(await s.currentRevision()) }))
        await s.close()
        assert.equal(await w1.ended(), true)
        assert.equal(await w2.ended(), true)
      })

      it('hands every watcher its own copy of each event object', async (t) => {
        const s = await open(t)
        const start = String(await s.currentRevision())
        const w1 = reader(s.watch(PREFIX, { resourceVersion: start }))
        const w2 = reader(s.watch(PREFIX, { resourceVersion: start }))
        const created = await s.create(key('a'), pod('a'))
        const e1 = await w1.next()
        e1.object.metadata.name = 'mutated'
        ;(e1.object.spec as { image: string }).image = 'mutated'
        const e2 = await w2.next()
        assert.deepEqual(e2.object, created)
        assert.deepEqual(await s.get(key('a')), created)
      })
    })

    describe('isolation', () => {
      it('never lets a caller change stored state through objects it passed in or got back', async (t) => {
        const s = await open(t)
        const input = pod('a', { app: 'web' })
        const created = await s.create(key('a'), input)
        const snapshot = structuredClone(created)
        input.metadata.labels!['app'] = 'changed-input'
        created.metadata.labels!['app'] = 'changed-result'
        const got = await s.get(key('a'))
        got!.metadata.labels!['app'] = 'changed-get'
        const listed = await s.list(PREFIX)
        listed.items[0]!.metadata.labels!['app'] = 'changed-list'
        assert.deepEqual(await s.get(key('a')), snapshot)

        const next = withImage(snapshot, 'nginx:2')
        const updated = await s.guaranteedUpdate(key('a'), (cur) => {
          cur.metadata.labels!['app'] = 'changed-in-tryUpdate'
          return next
        })
        ;(next.spec as { image: string }).image = 'changed-after-update'
        updated.metadata.name = 'changed'
        const stored = await s.get(key('a'))
        assert.deepEqual(stored?.spec, { image: 'nginx:2' })
        assert.deepEqual(stored?.metadata.labels, { app: 'web' })
        assert.equal(stored?.metadata.name, 'a')
      })
    })

    describe('compaction', () => {
      const skip = hooks.compact ? false : 'the backend gave no compact hook'

      it('fails a watch from a compacted revision with Compacted', { skip }, async (t) => {
        const s = await open(t)
        const first = await s.create(key('a'), pod('a'))
        for (let i = 0; i < 5; i++) await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, `nginx:${i + 2}`))
        await hooks.compact!(s)
        const w = s.watch(PREFIX, { resourceVersion: first.metadata.resourceVersion! })
        await assert.rejects(within(w[Symbol.asyncIterator]().next(), 'the watch error'), isStorageError('Compacted'))
        w.stop()
      })

      it('still watches from the current revision after a compaction', { skip }, async (t) => {
        const s = await open(t)
        await s.create(key('a'), pod('a'))
        await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        await hooks.compact!(s)
        const w = reader(s.watch(PREFIX, { resourceVersion: String(await s.currentRevision()) }))
        await s.create(key('b'), pod('b'))
        assert.deepEqual(summary([await w.next()]), ['ADDED b'])
        assert.deepEqual(names((await s.list(PREFIX)).items), ['a', 'b'])
      })

      it('fails a continue token from a compacted revision with Compacted', { skip }, async (t) => {
        const s = await open(t)
        for (const n of ['a', 'b', 'c']) await s.create(key(n), pod(n))
        const p1 = await s.list(PREFIX, { limit: 1 })
        await s.guaranteedUpdate(key('b'), (cur) => withImage(cur, 'nginx:2'))
        await s.delete(key('c'))
        await hooks.compact!(s)
        await assert.rejects(s.list(PREFIX, { limit: 1, continue: p1.continue! }), isStorageError('Compacted'))
      })

      it('fails an exact read at a compacted revision with Compacted', { skip }, async (t) => {
        const s = await open(t)
        const first = await s.create(key('a'), pod('a'))
        await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:2'))
        await s.guaranteedUpdate(key('a'), (cur) => withImage(cur, 'nginx:3'))
        await hooks.compact!(s)
        await assert.rejects(
          s.list(PREFIX, { resourceVersion: first.metadata.resourceVersion!, resourceVersionMatch: 'Exact' }),
          isStorageError('Compacted'),
        )
      })
    })
  })
}
