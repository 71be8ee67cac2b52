import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { jsonCodec, yamlCodec } from '../../core/storage/codec.js'
import { MAX_STORED_VALUE_BYTES } from '../../core/storage/errors.js'
import { StorageError } from '../../core/storage/interface.js'
import { EtcdStorage, type EtcdStorageOptions } from '../../runtimes/node/storage/etcd.js'
import { COMPACT_REV_KEY } from '../../runtimes/node/storage/etcd-compactor.js'
import { runStorageContract } from './contract.js'
import { EtcdServer } from './etcd-server.js'

let etcd: EtcdServer

before(async () => {
  etcd = await EtcdServer.start()
})

after(async () => {
  await etcd?.destroy()
})

/** A store on the shared etcd, emptied first so every test starts from nothing. */
async function openStore(opts: Partial<EtcdStorageOptions> = {}): Promise<EtcdStorage> {
  await etcd.wipe()
  return new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec, requestTimeoutMs: 5000, ...opts })
}

runStorageContract('etcd', () => openStore(), {
  compact: async (s) => s.compact(await s.currentRevision()),
})

const pod = (name: string, image = 'nginx:1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { image },
})

const withImage = (obj: KubeObject, image: string): KubeObject => ({ ...obj, spec: { image } })

function isCompacted(message: string) {
  return (err: unknown) => {
    assert.ok(err instanceof StorageError, String(err))
    assert.equal(err.code, 'Compacted')
    assert.equal(err.message, message)
    return true
  }
}

describe('EtcdStorage', () => {
  it("answers etcd's own refusal of a request over --max-request-bytes as the size check does", async () => {
    const s = await openStore()
    try {
      // A value of exactly the bound passes the check, and etcd refuses it once the key and framing are added.
      const edge = { ...pod('edge'), metadata: { name: 'edge', namespace: 'ns', annotations: { blob: '' } } }
      edge.metadata.annotations.blob = 'x'.repeat(MAX_STORED_VALUE_BYTES - jsonCodec.encode(edge).length)
      assert.equal(jsonCodec.encode(edge).length, MAX_STORED_VALUE_BYTES)
      await assert.rejects(s.create('/registry/pods/ns/edge', edge), (err: unknown) => {
        assert.ok(err instanceof StorageError, String(err))
        assert.equal(err.code, 'RequestTooLarge')
        assert.equal(err.message, 'etcdserver: request is too large')
        return true
      })
      assert.equal(await s.get('/registry/pods/ns/edge'), undefined)
    } finally {
      await s.close()
    }
  })

  it('ends a watch begun after the store closed, rather than trying it again for ever', async () => {
    const s = await openStore()
    const revision = String(await s.currentRevision())
    await s.close()
    const watch = s.watch('/registry/pods/', { resourceVersion: revision })
    let timer: ReturnType<typeof setTimeout> | undefined
    const waited = new Promise<'still open'>((resolve) => (timer = setTimeout(() => resolve('still open'), 3000)))
    const first = watch[Symbol.asyncIterator]().next().then(
      () => 'ended' as const,
      (err: unknown) => (err instanceof StorageError ? err.code : String(err)),
    )
    try {
      assert.equal(await Promise.race([first, waited]), 'Unavailable')
    } finally {
      clearTimeout(timer)
      watch.stop()
    }
  })

  it("reports etcd's mod_revision as the resourceVersion and stores the codec's bytes without it", async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    const raw = etcd.client()
    t.after(() => raw.close())
    const created = await s.create('/registry/pods/ns/a', pod('a'))
    const updated = await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => withImage(cur, 'nginx:2'))
    const [kv] = (await raw.kv.range({ key: Buffer.from('/registry/pods/ns/a') })).kvs
    assert.equal(kv?.mod_revision, updated.metadata.resourceVersion)
    assert.equal(kv?.create_revision, created.metadata.resourceVersion)
    assert.deepEqual(JSON.parse(kv!.value.toString()), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', namespace: 'ns' },
      spec: { image: 'nginx:2' },
    })
    assert.equal(String(await s.currentRevision()), (await raw.kv.range({ key: Buffer.from('x') })).header.revision)
  })

  it('stores YAML when its codec is YAML', async (t) => {
    const s = await openStore({ codec: yamlCodec })
    t.after(() => s.close())
    const raw = etcd.client()
    t.after(() => raw.close())
    await s.create('/registry/pods/ns/a', pod('a'))
    const [kv] = (await raw.kv.range({ key: Buffer.from('/registry/pods/ns/a') })).kvs
    assert.match(kv!.value.toString(), /^apiVersion: v1\nkind: Pod\n/)
    assert.deepEqual((await s.get('/registry/pods/ns/a'))?.spec, { image: 'nginx:1' })
  })

  it('fails a watch from a compacted revision with "too old resource version" naming both revisions', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    const first = await s.create('/registry/pods/ns/a', pod('a'))
    for (let i = 2; i <= 4; i++) await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => withImage(cur, `nginx:${i}`))
    const compactedAt = await s.currentRevision()
    await s.compact(compactedAt)
    const w = s.watch('/registry/pods/', { resourceVersion: first.metadata.resourceVersion! })
    await assert.rejects(
      w[Symbol.asyncIterator]().next(),
      isCompacted(`too old resource version: ${first.metadata.resourceVersion} (${compactedAt})`),
    )
    await assert.rejects(
      s.get('/registry/pods/ns/a', { resourceVersion: first.metadata.resourceVersion!, resourceVersionMatch: 'Exact' }),
      isCompacted('The resourceVersion for the provided list is too old.'),
    )
    const page = await s.list('/registry/pods/', { limit: 1, resourceVersion: String(compactedAt), resourceVersionMatch: 'Exact' })
    assert.equal(page.revision, compactedAt, 'the compacted revision itself is still readable')
  })

  it('compacts, each round, the revision it saw one round earlier, and shares rounds with other servers', async (t) => {
    const s = await openStore()
    const other = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec })
    t.after(() => Promise.all([s.close(), other.close()]))
    const mine = s.startCompactor(0)
    const theirs = other.startCompactor(0)
    const first = await s.create('/registry/pods/ns/a', pod('a'))
    await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => withImage(cur, 'nginx:2'))
    const round1 = await mine.compactOnce()
    assert.equal(round1.compacted, undefined, 'the first round only records where history starts')
    await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => withImage(cur, 'nginx:3'))
    assert.equal((await theirs.compactOnce()).compacted, undefined, 'another server that lost the race compacts nothing')
    const round2 = await mine.compactOnce()
    assert.equal(round2.compacted, round1.revision)
    const w = s.watch('/registry/pods/', { resourceVersion: first.metadata.resourceVersion! })
    await assert.rejects(
      w[Symbol.asyncIterator]().next(),
      isCompacted(`too old resource version: ${first.metadata.resourceVersion} (${round1.revision})`),
    )
    const raw = etcd.client()
    t.after(() => raw.close())
    const [clock] = (await raw.kv.range({ key: Buffer.from(COMPACT_REV_KEY) })).kvs
    assert.equal(clock?.value.toString(), String(round1.revision))
    assert.equal(clock?.version, '2', 'two successful rounds moved the shared clock twice')
  })

  it('compacts by itself every interval', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    const first = await s.create('/registry/pods/ns/a', pod('a'))
    const errors: unknown[] = []
    s.startCompactor(50, (err) => errors.push(err))
    // The second round compacts what the first one saw, which includes `first`.
    await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => withImage(cur, 'nginx:2'))
    const deadline = Date.now() + 5000
    let compacted = false
    while (!compacted && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      compacted = await s
        .get('/registry/pods/ns/a', { resourceVersion: first.metadata.resourceVersion!, resourceVersionMatch: 'Exact' })
        .then(
          () => false,
          (err: unknown) => err instanceof StorageError && err.code === 'Compacted',
        )
    }
    assert.ok(compacted, 'history before the first round was compacted')
    assert.deepEqual(errors, [])
  })

  it('answers the health check while etcd serves, and reports the reason when it does not', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    await s.checkHealth(2000)
    const nobody = new EtcdStorage({ endpoints: ['http://127.0.0.1:1'], codec: jsonCodec })
    t.after(() => nobody.close())
    await assert.rejects(nobody.checkHealth(500), /^Error: error getting data from etcd: /)
    await assert.rejects(nobody.get('/registry/pods/ns/a'), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.equal(err.code, 'Unavailable')
      assert.match(err.message, /^etcd is unavailable \(http:\/\/127\.0\.0\.1:1\): /)
      return true
    })
  })

  it('attaches keys with a TTL to a lease shared while it lives long enough', async (t) => {
    const s = await openStore({ ttlSeconds: (key) => (key.startsWith('/registry/events/') ? 3600 : undefined) })
    t.after(() => s.close())
    const raw = etcd.client()
    t.after(() => raw.close())
    await s.create('/registry/events/ns/e1', pod('e1'))
    await s.guaranteedUpdate('/registry/events/ns/e1', (cur) => withImage(cur, 'nginx:2'))
    await s.create('/registry/events/ns/e2', pod('e2'))
    await s.create('/registry/pods/ns/p', pod('p'))
    const lease = async (key: string) => (await raw.kv.range({ key: Buffer.from(key) })).kvs[0]?.lease
    const shared = await lease('/registry/events/ns/e1')
    assert.notEqual(shared, '0')
    assert.equal(await lease('/registry/events/ns/e2'), shared)
    assert.equal(await lease('/registry/pods/ns/p'), '0')
    const granted = await raw.leaseClient.leaseTimeToLive({ ID: shared! })
    // Upstream grants the TTL plus the reuse window (5% of the TTL, at most --lease-reuse-duration-seconds).
    assert.equal(granted.grantedTTL, String(3600 + 60))
  })

  it('lets etcd remove a key when its TTL runs out, which watchers see as DELETED', async (t) => {
    const s = await openStore({ ttlSeconds: (key) => (key.startsWith('/registry/events/') ? 1 : undefined) })
    t.after(() => s.close())
    const w = s.watch('/registry/events/', { resourceVersion: String(await s.currentRevision()) })
    t.after(() => w.stop())
    await s.create('/registry/events/ns/e1', pod('e1'))
    await s.create('/registry/pods/ns/p', pod('p'))
    const it = w[Symbol.asyncIterator]()
    const seen = [(await it.next()).value, (await it.next()).value]
    assert.deepEqual(
      seen.map((e) => `${e?.type} ${e?.object.metadata.name}`),
      ['ADDED e1', 'DELETED e1'],
    )
    assert.equal(await s.count('/registry/events/'), 0)
    assert.equal(await s.count('/registry/pods/'), 1)
  })

  it('never sends a BOOKMARK past an event it has not delivered yet', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    // Writes right after the watch starts race etcd's catching up of the new watcher; try it many times.
    for (let round = 0; round < 10; round++) {
      const start = await s.currentRevision()
      const w = s.watch('/registry/pods/', { resourceVersion: String(start), bookmarks: true, bookmarkIntervalMs: 2 })
      const it = w[Symbol.asyncIterator]()
      await s.create(`/registry/services/ns/s${round}`, pod(`s${round}`))
      const created = await s.create(`/registry/pods/ns/p${round}`, pod(`p${round}`))
      const revision = Number(created.metadata.resourceVersion)
      for (;;) {
        const event = (await it.next()).value!
        if (event.type === 'ADDED') break
        assert.ok(event.revision < revision, `a BOOKMARK at ${event.revision} came before the ADDED at ${revision}`)
      }
      let after = (await it.next()).value!
      while (after.type !== 'BOOKMARK') after = (await it.next()).value!
      assert.ok(after.revision >= revision)
      w.stop()
    }
  })

  it('moves its BOOKMARKs on when only keys outside its range change', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    const w = s.watch('/registry/pods/', { resourceVersion: String(await s.currentRevision()), bookmarks: true, bookmarkIntervalMs: 20 })
    t.after(() => w.stop())
    for (const name of ['x', 'y', 'z']) await s.create(`/registry/services/ns/${name}`, pod(name))
    const current = await s.currentRevision()
    const it = w[Symbol.asyncIterator]()
    let event = (await it.next()).value!
    while (event.revision < current) event = (await it.next()).value!
    assert.equal(event.type, 'BOOKMARK')
    assert.equal(event.revision, current)
  })

  it('refuses an exact read at a revision etcd has not reached yet with TooLargeResourceVersion', async (t) => {
    const s = await openStore()
    t.after(() => s.close())
    await s.create('/registry/pods/ns/a', pod('a'))
    const current = await s.currentRevision()
    await assert.rejects(
      s.list('/registry/pods/', { resourceVersion: String(current + 10), resourceVersionMatch: 'Exact' }),
      (err: unknown) => err instanceof StorageError && err.code === 'TooLargeResourceVersion' && err.message === `${current + 10}, current: ${current}`,
    )
  })
})
