/**
 * The events a watch starts with (the objects at its start, or the changes
 * after its resourceVersion) are read by the store at the watch's request,
 * not pushed by writers: they are not counted against the watcher's buffer,
 * as upstream's watchers send their initial events apart from it. Counted,
 * a watch served by the storage itself (the watch cache off, or a
 * resourceVersion older than the cache's window) whose start held more events
 * than the buffer was ended before its client read one, however fast it read:
 * it relisted and watched again, forever. Live changes stay bounded
 * (slow-watchers.test.ts).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { codecFor, jsonCodec } from '../../core/storage/codec.js'
import type { Storage } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { createTestServer, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const METRIC = 'apiserver_terminated_watchers_total{group="",resource="configmaps"}'
const BUFFER = 10
const OBJECTS = 35

const dirs: string[] = []
let etcd: EtcdServer | undefined
before(async () => {
  etcd = await EtcdServer.start()
})
after(async () => {
  await etcd?.destroy()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const backends: Array<[string, () => Promise<Storage>]> = [
  ['memory', async () => new MemoryStorage()],
  [
    'the embedded store',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'watch-start-'))
      dirs.push(dataDir)
      return openEmbeddedStore({ dataDir, codec: codecFor('application/json'), compactionIntervalMs: 0 })
    },
  ],
  [
    'etcd',
    async () => {
      await etcd!.wipe()
      return new EtcdStorage({ endpoints: [etcd!.clientUrl], codec: jsonCodec, requestTimeoutMs: 5000 })
    },
  ],
]

/** Every line of a watch that ends by its own timeoutSeconds, read from a later turn on. */
async function watchLines(api: TestClient, query: string): Promise<Array<{ type: string; object: { metadata: { name: string } } }>> {
  const res = await api.server.fetch(new Request(`http://in-process${CM}?watch=true&timeoutSeconds=1&${query}`))
  assert.equal(res.status, 200)
  // The client reads from its next turn on, as a client across a network does: the store has read the start by then.
  await new Promise((resolve) => setTimeout(resolve, 50))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } })
}

for (const [name, open] of backends) {
  describe(`a watch served by ${name} itself (the watch cache off)`, () => {
    it(`gets every one of the ${OBJECTS} events it starts with through a buffer of ${BUFFER}, and is not ended as too slow`, async () => {
      const storage = await open()
      const server = createTestServer({ watchCache: false, watcherBufferSize: BUFFER }, { storage })
      try {
        await server.ready
        const api = new TestClient(server)
        const first = await api.post(CM, { metadata: { name: 'cm-0' } })
        for (let i = 1; i < OBJECTS; i++) assert.equal((await api.post(CM, { metadata: { name: `cm-${i}` } })).status, 201)
        const before = Number(first.body.metadata.resourceVersion) - 1
        for (const query of ['resourceVersion=0', '', `resourceVersion=${before}`]) {
          const events = await watchLines(api, query)
          assert.equal(events.length, OBJECTS, `watch ${query || 'without resourceVersion'}`)
          assert.ok(events.every((e) => e.type === 'ADDED'))
          assert.deepEqual(new Set(events.map((e) => e.object.metadata.name)).size, OBJECTS)
        }
        assert.doesNotMatch((await api.get('/metrics')).text, new RegExp(`^${METRIC.replace(/[{}]/g, '\\$&')} [1-9]`, 'm'))
      } finally {
        await server.shutdown()
        await storage.close()
      }
    })
  })
}

describe('reads of many rows from the embedded store (a watch start, a list a watch-list starts with)', () => {
  const ROWS = 3000
  const PREFIX = '/registry/configmaps/'

  /** What `work` answers, and how many turns the event loop (other requests' chances) had while it ran. */
  async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
    let turns = 0
    let running = true
    const counting = (async () => {
      while (running) {
        await new Promise((resolve) => setImmediate(resolve))
        turns++
      }
    })()
    try {
      const value = await work()
      running = false
      await counting
      return { value, turns }
    } finally {
      running = false
    }
  }

  /** Counts the turns of the event loop until `watcher` has delivered `count` events. */
  async function turnsWhileReading(watcher: AsyncIterable<unknown>, count: number): Promise<{ events: number; turns: number }> {
    const { value: events, turns } = await turnsDuring(async () => {
      let seen = 0
      for await (const _ of watcher) if (++seen === count) break
      return seen
    })
    return { events, turns }
  }

  /** A fresh embedded store holding ROWS ConfigMaps; the revision of the first. */
  async function storeWithRows(): Promise<{ storage: Storage; first: number }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'watch-start-'))
    dirs.push(dataDir)
    const storage = await openEmbeddedStore({ dataDir, codec: codecFor('application/json'), compactionIntervalMs: 0 })
    const first = await storage.create(`${PREFIX}ns/c0`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c0', namespace: 'ns' } })
    const writes: Array<Promise<unknown>> = []
    for (let i = 1; i < ROWS; i++) writes.push(storage.create(`${PREFIX}ns/c${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'ns' }, data: { i: String(i) } }))
    await Promise.all(writes)
    return { storage, first: Number(first.metadata.resourceVersion) }
  }

  it(`a list without a limit lets other work run while it reads ${ROWS} rows`, async () => {
    const { storage } = await storeWithRows()
    try {
      const { value: list, turns } = await turnsDuring(() => storage.list(PREFIX))
      assert.equal(list.items.length, ROWS)
      assert.ok(turns >= 3, `${turns} turns of the event loop while ${ROWS} rows were listed`)
    } finally {
      await storage.close()
    }
  })

  it(`a watch lets other work run while it reads ${ROWS} rows, from resourceVersion 0 and from an old resourceVersion`, async () => {
    const { storage, first } = await storeWithRows()
    try {
      const before = String(first - 1)
      for (const resourceVersion of ['0', before]) {
        const { events, turns } = await turnsWhileReading(storage.watch(PREFIX, { resourceVersion }), ROWS)
        assert.equal(events, ROWS, `from ${resourceVersion}`)
        // Read in one run, the start gave the event loop no turn (or one) before its last event.
        assert.ok(turns >= 3, `from ${resourceVersion}: ${turns} turns of the event loop while ${ROWS} rows were read`)
      }
    } finally {
      await storage.close()
    }
  })
})
