/**
 * The watch cache over etcd: the storage contract through it, and
 * consistent reads served from it that still see every write acknowledged
 * before they started, including writes another server (another etcd
 * client) made, which this cache learns of only through its watch.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { jsonCodec, protobufCodec } from '../../core/storage/codec.js'
import type { ListOptions, ListResult, ReadOptions } from '../../core/storage/interface.js'
import { WatchCache } from '../../core/storage/watch-cache.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { runStorageContract } from './contract.js'
import { EtcdServer } from './etcd-server.js'

let etcd: EtcdServer

before(async () => {
  etcd = await EtcdServer.start()
})

after(async () => {
  await etcd?.destroy()
})

const PODS = '/registry/pods/'

/** An etcd store that counts the reads reaching it. */
class CountedEtcd extends EtcdStorage {
  gets = 0
  lists = 0

  override get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined> {
    this.gets++
    return super.get(key, opts)
  }

  override list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    this.lists++
    return super.list(prefix, opts)
  }
}

function openEtcd(): CountedEtcd {
  return new CountedEtcd({ endpoints: [etcd.clientUrl], codec: jsonCodec, requestTimeoutMs: 5000 })
}

runStorageContract(
  'watch cache over etcd',
  async () => {
    await etcd.wipe()
    const cache = new WatchCache(openEtcd())
    cache.cacheResource(PODS)
    return cache
  },
  {
    compact: async (cache) => {
      const backend = cache.backend as EtcdStorage
      // The cache must have seen every write first: etcd compacts on a timer in a real server, long after
      // them. Compacting under a cache whose watch is still being opened makes it relist, and a relist
      // that finds changes it missed ends every client watch, as upstream's cacher does.
      await cache.list(PODS)
      const revision = await backend.currentRevision()
      await backend.compact(revision)
      cache.compact(revision)
    },
    // The cache hears of a write through its etcd watch, which may come after the write's answer.
    readsMayLag: true,
  },
)

const pod = (name: string, image: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { image },
})

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
  data: { key: 'value' },
})

const image = (obj: KubeObject | undefined) => (obj?.['spec'] as { image?: string } | undefined)?.image

describe('consistent reads from the watch cache over etcd', () => {
  it("see every write another server had acknowledged before the read started, from the cache, also after writes to other resources", async (t) => {
    // Gets as the GET handler makes them (readOnly); lists from the cache whoever asks.
    await etcd.wipe()
    const reader = openEtcd()
    const cache = new WatchCache(reader)
    cache.cacheResource(PODS)
    cache.cacheResource('/registry/configmaps/')
    // The other server: its own client, no cache; its writes reach this cache only through etcd's watch.
    const writer = openEtcd()
    t.after(async () => {
      await cache.close()
      await writer.close()
    })
    await cache.loaded()
    const key = `${PODS}ns/a`
    await writer.create(key, pod('a', 'v0'))
    for (let i = 1; i <= 30; i++) {
      const written = await writer.guaranteedUpdate(key, (cur) => ({ ...cur, spec: { image: `v${i}` } }))
      // Every other round a write to another resource moves etcd's revision past this one's last change.
      if (i % 2 === 0) await writer.create(`/registry/configmaps/ns/c${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'ns' } })
      const [got, listed] = await Promise.all([cache.get(key, { readOnly: true }), cache.list(`${PODS}ns/`)])
      assert.equal(image(got), `v${i}`, `get after write ${i}`)
      assert.equal(got?.metadata.resourceVersion, written.metadata.resourceVersion)
      assert.deepEqual(listed.items.map(image), [`v${i}`], `list after write ${i}`)
      assert.ok(listed.revision >= Number(written.metadata.resourceVersion))
    }
    await writer.delete(key)
    assert.equal(await cache.get(key, { readOnly: true }), undefined, 'a get after the delete finds nothing')
    assert.deepEqual((await cache.list(`${PODS}ns/`)).items, [])
    assert.equal(reader.gets, 0, 'every get was answered by the cache')
    // The first lists of each resource load the cache; every read after them came from the cache.
    assert.equal(reader.lists, 2, 'every list was answered by the cache')
  })

  it('answers reads that arrive together with one question to etcd, and each still sees the writes before it', async (t) => {
    await etcd.wipe()
    const reader = openEtcd()
    const cache = new WatchCache(reader)
    cache.cacheResource(PODS)
    const writer = openEtcd()
    t.after(async () => {
      await cache.close()
      await writer.close()
    })
    await cache.loaded()
    const reads = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const key = `${PODS}ns/p${i}`
        const written = await writer.create(key, pod(`p${i}`, `x${i}`))
        return { written, got: await cache.get(key, { readOnly: true }) }
      }),
    )
    for (const { written, got } of reads) {
      assert.equal(got?.metadata.name, written.metadata.name)
      assert.equal(got?.metadata.resourceVersion, written.metadata.resourceVersion)
    }
    assert.equal(reader.gets, 0)
  })

  it('hands out copies unless the caller only reads, and frozen objects then', async (t) => {
    await etcd.wipe()
    const cache = new WatchCache(openEtcd())
    cache.cacheResource(PODS)
    t.after(() => cache.close())
    await cache.loaded()
    await cache.create(`${PODS}ns/a`, pod('a', 'v1'))
    // A consistent read waits until the cache holds the create; a read at resourceVersion 0 would not.
    const shared = await cache.get(`${PODS}ns/a`, { readOnly: true })
    assert.ok(shared && Object.isFrozen(shared) && Object.isFrozen(shared.metadata))
    const copy = await cache.get(`${PODS}ns/a`, { resourceVersion: '0' })
    assert.ok(copy && !Object.isFrozen(copy))
    copy.metadata.labels = { changed: 'here' }
    assert.equal(shared.metadata.labels, undefined)
    assert.equal((await cache.get(`${PODS}ns/a`, { readOnly: true }))?.metadata.labels, undefined, 'a change to a copy stays in it')
  })
})

/**
 * An etcd store holding `a` at v1 then v2, v2 written by another server,
 * and the v1 object as an out-of-date cache would have it.
 */
async function staleGuess(t: { after: (fn: () => Promise<void>) => void }) {
  await etcd.wipe()
  const store = openEtcd()
  const otherServer = openEtcd()
  t.after(async () => {
    await store.close()
    await otherServer.close()
  })
  const key = `${PODS}ns/a`
  const v1 = await store.create(key, pod('a', 'v1'))
  const v2 = await otherServer.guaranteedUpdate(key, (cur) => ({ ...cur, spec: { image: 'v2' } }))
  return { store, key, v1, v2 }
}

/** A watch cache over an empty etcd, holding pod `a` at v0. */
async function cachedPod(t: { after: (fn: () => Promise<void>) => void }) {
  await etcd.wipe()
  const cache = new WatchCache(openEtcd())
  cache.cacheResource(PODS)
  t.after(() => cache.close())
  await cache.loaded()
  const key = `${PODS}ns/a`
  await cache.create(key, pod('a', 'v0'))
  return { cache, key }
}

describe("updates that start from the cache's copy", () => {
  it('applies the change to the current state when the guess is out of date', async (t) => {
    const { store, key, v1, v2 } = await staleGuess(t)
    const seen: (string | undefined)[] = []
    const updated = await store.guaranteedUpdate(
      key,
      (cur) => {
        seen.push(image(cur))
        return { ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } }
      },
      { suggestion: structuredClone(v1) },
    )
    assert.equal(image(updated), 'v2', 'the change went onto v2, not onto the old guess')
    assert.deepEqual(updated.metadata.labels, { touched: 'yes' })
    assert.ok(Number(updated.metadata.resourceVersion) > Number(v2.metadata.resourceVersion))
    assert.equal(seen.at(-1), 'v2')
    assert.deepEqual(await store.get(key), updated)
  })

  it('writes nothing and keeps the current resourceVersion when the change is none, whatever the guess', async (t) => {
    const { store, key, v1, v2 } = await staleGuess(t)
    const revision = await store.currentRevision()
    const same = await store.guaranteedUpdate(key, (cur) => cur, { suggestion: structuredClone(v1) })
    assert.equal(same.metadata.resourceVersion, v2.metadata.resourceVersion)
    assert.equal(await store.currentRevision(), revision)
  })

  it("answers a change that is none from etcd's bytes when the guess was current, without running tryUpdate again", async (t) => {
    const { store, key, v2 } = await staleGuess(t)
    const revision = await store.currentRevision()
    let calls = 0
    const same = await store.guaranteedUpdate(
      key,
      (cur) => {
        calls++
        return cur
      },
      { suggestion: structuredClone(v2) },
    )
    assert.equal(calls, 1, 'etcd held the bytes the update produced: nothing to run again')
    assert.equal(same.metadata.resourceVersion, v2.metadata.resourceVersion)
    assert.deepEqual(same, await store.get(key))
    assert.equal(await store.currentRevision(), revision)
  })

  it('writes again a value stored in another encoding, though the update changes nothing in the object', async (t) => {
    await etcd.wipe()
    // Another server that stores JSON (--storage-media-type=application/json); this one stores protobuf.
    const jsonServer = openEtcd()
    const store = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: protobufCodec, requestTimeoutMs: 5000 })
    t.after(async () => {
      await jsonServer.close()
      await store.close()
    })
    const key = '/registry/configmaps/ns/a'
    const stored = await jsonServer.create(key, configMap('a'))
    const same = await store.guaranteedUpdate(key, (cur) => cur, { suggestion: structuredClone(stored) })
    assert.ok(Number(same.metadata.resourceVersion) > Number(stored.metadata.resourceVersion), 'rewritten as this server encodes it, as a storage migration expects')
    assert.deepEqual(same.data, stored.data)
    const again = await store.guaranteedUpdate(key, (cur) => cur, { suggestion: structuredClone(same) })
    assert.equal(again.metadata.resourceVersion, same.metadata.resourceVersion, 'now stored as it would write it: nothing to write')
    assert.equal(await store.currentRevision(), Number(same.metadata.resourceVersion))
  })

  it("starts from this store's own later write when the guess is older than it, running tryUpdate once", async (t) => {
    await etcd.wipe()
    const store = openEtcd()
    t.after(() => store.close())
    const key = `${PODS}ns/a`
    const v1 = await store.create(key, pod('a', 'v1'))
    await store.guaranteedUpdate(key, (cur) => ({ ...cur, spec: { image: 'v2' } }))
    const seen: (string | undefined)[] = []
    const updated = await store.guaranteedUpdate(
      key,
      (cur) => {
        seen.push(image(cur))
        return { ...cur, spec: { image: 'v3' } }
      },
      { suggestion: structuredClone(v1) },
    )
    assert.deepEqual(seen, ['v2'], 'the guess was the write this store made last, not the older copy')
    assert.equal(image(updated), 'v3')
    assert.deepEqual(await store.get(key), updated)
  })

  it('checks preconditions and tryUpdate against the current state, not the guess', async (t) => {
    const { store, key, v1, v2 } = await staleGuess(t)
    const updated = await store.guaranteedUpdate(
      key,
      (cur) => {
        if (cur.metadata.resourceVersion !== v2.metadata.resourceVersion) throw new Error('the object was modified')
        return { ...cur, spec: { image: 'v3' } }
      },
      { suggestion: structuredClone(v1), preconditions: { resourceVersion: v2.metadata.resourceVersion! } },
    )
    assert.equal(image(updated), 'v3')
  })

  it('runs the update on a copy of the guess, which stays as it was (the cache\u2019s own object)', async (t) => {
    const { store, key, v2 } = await staleGuess(t)
    const guess = structuredClone(v2)
    const updated = await store.guaranteedUpdate(
      key,
      (cur) => {
        ;(cur.spec as { image: string }).image = 'v3' // an update changes what it is given in place
        return cur
      },
      { suggestion: guess },
    )
    assert.equal(image(updated), 'v3')
    assert.equal(image(guess), 'v2', 'the guess is the caller\u2019s: unchanged')
    assert.equal(image(await store.get(key)), 'v3')
  })

  it('updates through the cache onto what was written last', async (t) => {
    const { cache, key } = await cachedPod(t)
    for (let i = 1; i <= 5; i++) await cache.guaranteedUpdate(key, (cur) => ({ ...cur, spec: { image: `${image(cur)}+${i}` } }))
    assert.equal(image(await cache.get(key)), 'v0+1+2+3+4+5')
  })
})

describe("deletes that start from the cache's copy", () => {
  it('deletes the current state when the guess is out of date, and answers with it', async (t) => {
    const { store, key, v1 } = await staleGuess(t)
    const seen: (string | undefined)[] = []
    const deleted = await store.delete(key, { suggestion: structuredClone(v1), validate: (cur) => void seen.push(image(cur)) })
    assert.equal(image(deleted), 'v2')
    assert.equal(seen.at(-1), 'v2', 'validate saw the state that was deleted')
    assert.equal(await store.get(key), undefined)
  })

  it('checks preconditions against the current state, not the guess', async (t) => {
    const { store, key, v1, v2 } = await staleGuess(t)
    const deleted = await store.delete(key, { suggestion: structuredClone(v1), preconditions: { resourceVersion: v2.metadata.resourceVersion! } })
    assert.equal(image(deleted), 'v2')
    assert.equal(await store.get(key), undefined)
  })

  it('refuses as the current state does: a veto on the guess is checked again, and stands when it holds there too', async (t) => {
    const { store, key, v1, v2 } = await staleGuess(t)
    const calls: (string | undefined)[] = []
    await assert.rejects(
      store.delete(key, {
        suggestion: structuredClone(v1),
        validate: (cur) => {
          calls.push(image(cur))
          throw new Error('vetoed')
        },
      }),
      /vetoed/,
    )
    assert.deepEqual(calls, ['v1', 'v2'])
    assert.equal(image(await store.get(key)), 'v2')
    await assert.rejects(store.delete(key, { suggestion: structuredClone(v2), preconditions: { uid: 'another' } }), { code: 'PreconditionFailed' })
    assert.equal(image(await store.get(key)), 'v2', 'nothing was deleted')
  })

  it('deletes through the cache', async (t) => {
    const { cache, key } = await cachedPod(t)
    const updated = await cache.guaranteedUpdate(key, (cur) => ({ ...cur, spec: { image: 'v1' } }))
    const deleted = await cache.delete(key, { preconditions: { resourceVersion: updated.metadata.resourceVersion! } })
    assert.equal(image(deleted), 'v1')
    assert.equal(await cache.get(key, { resourceVersion: '' }), undefined)
  })
})
