/**
 * A write of a large object on the stores that do their work in this
 * process: the object a write stores (decoded from the bytes written, or
 * copied in Go's order, and frozen) is made ready before the write, and
 * for a large object each of those passes is a step of its own, with the
 * event loop let run between them. What is counted is whether the loop ran
 * while the store was writing (turns of a setImmediate ticker), never how
 * long anything took. Writes that land on the key meanwhile are not lost:
 * an update starts over on them, a create finds the key taken.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { codecFor } from '../../core/storage/codec.js'
import { type Storage, type StorageEvent, StorageError } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { identityTransformer } from '../../core/storage/value/transformer.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { EtcdServer } from './etcd-server.js'

const root = mkdtempSync(join(tmpdir(), 'large-values-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0

const PREFIX = '/registry/configmaps/default/'
const KEYS = 30_000

function configMap(name: string, keys: number): KubeObject {
  const data = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'v']))
  return { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default', uid: `uid-${name}` }, data }
}

/** What `work` gives, and how many turns the event loop took while it ran. */
async function counted<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0
  let done = false
  const tick = (): void => {
    turns++
    if (!done) setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const value = await work()
    return { value, turns }
  } finally {
    done = true
  }
}

/** The next event of a watch. */
async function nextEvent(events: AsyncIterator<StorageEvent>): Promise<StorageEvent> {
  const next = await events.next()
  assert.equal(next.done, false)
  return next.value as StorageEvent
}

let etcd: EtcdServer | undefined
after(() => etcd?.destroy())

/** A store, and whether its writes make no I/O of their own (so that a small one takes no turn of the event loop). */
const stores: [string, () => Promise<Storage>, { inProcess: boolean }?][] = [
  ['memory', async () => new MemoryStorage()],
  // Held as a transformer's bytes, as with encryption at rest: the object stored is those bytes decoded.
  ['memory, transformed', async () => new MemoryStorage({ transformerFor: () => ({ toStorage: identityTransformer.toStorage, fromStorage: identityTransformer.fromStorage }) })],
  ['embedded (protobuf)', () => openEmbeddedStore({ dataDir: join(root, `store-${++dirs}`), codec: codecFor('application/vnd.kubernetes.protobuf'), compactionIntervalMs: 0 })],
  // Its writes wait for etcd anyway: what is checked is that none is lost while the object is decoded in steps.
  [
    'etcd (protobuf)',
    async () => {
      etcd ??= await EtcdServer.start()
      await etcd.wipe()
      return new EtcdStorage({ endpoints: [etcd.clientUrl], codec: codecFor('application/vnd.kubernetes.protobuf'), requestTimeoutMs: 10_000 })
    },
    { inProcess: false },
  ],
]

for (const [name, open, { inProcess } = { inProcess: true }] of stores) {
  describe(`large values on the ${name} store`, { timeout: 60_000 }, () => {
    it(`lets the event loop run while it makes a create or an update of ${KEYS} keys ready, and not for a small object`, async (t) => {
      const s = await open()
      t.after(() => s.close())
      const start = await s.currentRevision()
      const watch = s.watch(PREFIX, { resourceVersion: String(start), readOnly: true })
      t.after(() => watch.stop())
      const events = watch[Symbol.asyncIterator]()

      const created = await counted(() => s.create(`${PREFIX}large`, configMap('large', KEYS)))
      assert.ok(created.turns > 0, 'the event loop ran while the large object was written')
      assert.equal(Object.keys(created.value.data as object).length, KEYS)
      const added = await nextEvent(events)
      assert.equal(added.type, 'ADDED')
      assert.equal(added.object.metadata.resourceVersion, created.value.metadata.resourceVersion)
      // The stores in this process hand their watchers the object they keep, frozen whole once it took its revision.
      if (inProcess) assert.ok(Object.isFrozen(added.object) && Object.isFrozen(added.object.metadata) && Object.isFrozen(added.object.data))

      const updated = await counted(() => s.guaranteedUpdate(`${PREFIX}large`, (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { patched: 'yes' } } })))
      assert.ok(updated.turns > 0, 'the event loop ran while the large object was updated')
      assert.equal(updated.value.metadata.labels?.['patched'], 'yes')
      assert.ok(Number(updated.value.metadata.resourceVersion) > Number(created.value.metadata.resourceVersion))
      const modified = await nextEvent(events)
      assert.equal(modified.type, 'MODIFIED')
      assert.deepEqual(modified.object, updated.value)

      if (!inProcess) return
      const small = await counted(() => s.create(`${PREFIX}small`, configMap('small', 3)))
      assert.equal(small.turns, 0, 'a small object is written without waiting for the event loop')
      const smallUpdate = await counted(() => s.guaranteedUpdate(`${PREFIX}small`, (cur) => ({ ...cur, data: { k0: 'w' } })))
      assert.equal(smallUpdate.turns, 0)
    })

    it('loses neither of two large updates of one key whose passes run between each other', async (t) => {
      const s = await open()
      t.after(() => s.close())
      await s.create(`${PREFIX}large`, configMap('large', KEYS))
      const attempts = { a: 0, b: 0 }
      const update = (who: 'a' | 'b') =>
        s.guaranteedUpdate(`${PREFIX}large`, (cur) => {
          attempts[who]++
          return { ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, [who]: 'yes' } } }
        })
      const [a, b] = await Promise.all([update('a'), update('b')])
      assert.equal(attempts.a + attempts.b, 3, 'one of them started over on the other\'s write')
      const last = Number(a.metadata.resourceVersion) > Number(b.metadata.resourceVersion) ? a : b
      assert.deepEqual(last.metadata.labels, { a: 'yes', b: 'yes' })
      assert.notEqual(a.metadata.resourceVersion, b.metadata.resourceVersion)
      assert.deepEqual(await s.get(`${PREFIX}large`), last)
    })

    it('refuses a large create of a key another create took while it was being made ready, keeping that one', async (t) => {
      const s = await open()
      t.after(() => s.close())
      const large = s.create(`${PREFIX}taken`, configMap('taken', KEYS))
      await new Promise<void>((resolve) => setImmediate(resolve))
      const small = await s.create(`${PREFIX}taken`, configMap('taken', 1))
      await assert.rejects(large, (err) => err instanceof StorageError && err.code === 'KeyExists')
      assert.deepEqual(await s.get(`${PREFIX}taken`), small)
    })
  })
}
