/**
 * `--event-ttl` on the backends that have no TTL of their own (memory and
 * the embedded store): an event goes once its time to live has passed since
 * its last write, a watcher sees it DELETED, other objects stay, and events
 * stored before a restart expire too.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type { Storage } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { codecFor } from '../../core/storage/codec.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { createTestServer, eventually, readEvents, TestClient } from './harness.js'

const TTL_MS = 600
const EVENTS = '/api/v1/namespaces/default/events'

const event = (name: string) => ({
  metadata: { name },
  involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
  reason: 'Started',
  message: 'Started container',
})

const dirs: string[] = []
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function embedded(dir?: string): Promise<{ storage: Storage; dir: string }> {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'event-ttl-'))
  if (!dir) dirs.push(dataDir)
  return { storage: await openEmbeddedStore({ dataDir, codec: codecFor('application/json'), compactionIntervalMs: 0 }), dir: dataDir }
}

const backends: [string, () => Promise<Storage>][] = [
  ['memory', async () => new MemoryStorage()],
  ['the embedded store', async () => (await embedded()).storage],
]

for (const [name, open] of backends) {
  describe(`--event-ttl on ${name}`, () => {
    it('deletes an event after its time to live, seen as DELETED by a watcher, and keeps other objects', async () => {
      const storage = await open()
      const server = createTestServer({ eventTtlMs: TTL_MS }, { storage })
      const client = new TestClient(server)
      try {
        await server.ready
        const created = await client.post(EVENTS, event('short-lived'))
        assert.equal(created.status, 201, created.text)
        assert.equal((await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'stays' } })).status, 201)
        const watch = await server.fetch(new Request(`http://in-process${EVENTS}?watch=1&resourceVersion=${created.body.metadata.resourceVersion}`))
        const [deleted] = await readEvents(watch, 1)
        assert.equal(deleted?.type, 'DELETED')
        assert.equal(deleted?.object.metadata.name, 'short-lived')
        assert.equal((await client.get(`${EVENTS}/short-lived`)).status, 404)
        assert.equal((await client.get('/apis/events.k8s.io/v1/namespaces/default/events/short-lived')).status, 404)
        assert.equal((await client.get('/api/v1/namespaces/default/configmaps/stays')).status, 200)
      } finally {
        await server.shutdown()
        await storage.close()
      }
    })

    it('counts the time to live from the last write', async () => {
      const storage = await open()
      const server = createTestServer({ eventTtlMs: TTL_MS }, { storage })
      const client = new TestClient(server)
      try {
        await server.ready
        const created = await client.post(EVENTS, event('renewed'))
        assert.equal(created.status, 201)
        // Written again before it expires: it lives a full time to live from this write.
        await new Promise((r) => setTimeout(r, TTL_MS / 2))
        const updated = await client.put(`${EVENTS}/renewed`, { ...created.body, count: 2 })
        assert.equal(updated.status, 200, updated.text)
        const watch = await server.fetch(new Request(`http://in-process${EVENTS}?watch=1&resourceVersion=${updated.body.metadata.resourceVersion}`))
        const [deleted] = await readEvents(watch, 1)
        assert.equal(deleted?.type, 'DELETED')
        assert.equal(deleted?.object.count, 2)
      } finally {
        await server.shutdown()
        await storage.close()
      }
    })
  })
}

describe('--event-ttl after a restart of the embedded store', () => {
  it('expires events stored before the restart', async () => {
    const first = await embedded()
    const before = createTestServer({}, { storage: first.storage })
    await before.ready
    assert.equal((await new TestClient(before).post(EVENTS, event('old'))).status, 201)
    await before.shutdown()
    await first.storage.close()

    const again = await embedded(first.dir)
    const server = createTestServer({ eventTtlMs: TTL_MS }, { storage: again.storage })
    const client = new TestClient(server)
    try {
      await server.ready
      assert.equal((await client.get(`${EVENTS}/old`)).status, 200)
      await eventually('the old event is gone', async () => (await client.get(`${EVENTS}/old`)).status === 404)
    } finally {
      await server.shutdown()
      await again.storage.close()
    }
  })
})
