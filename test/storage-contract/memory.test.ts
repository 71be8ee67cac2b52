import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { reissueAtLatest } from '../../core/storage/continue-token.js'
import { StorageError } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { runStorageContract } from './contract.js'

runStorageContract('memory', async () => new MemoryStorage(), {
  compact: async (s) => s.compact(await s.currentRevision()),
})

const pod = (name: string, image = 'nginx:1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { image },
})

describe('MemoryStorage', () => {
  it('reports revision 1 while empty and gives the first write revision 2', async () => {
    const s = new MemoryStorage()
    assert.equal(await s.currentRevision(), 1)
    const created = await s.create('/registry/pods/ns/a', pod('a'))
    assert.equal(created.metadata.resourceVersion, '2')
  })

  it('forgets history beyond historyLimit: old watches and exact reads fail, recent ones work', async () => {
    const s = new MemoryStorage({ historyLimit: 5 })
    const first = await s.create('/registry/pods/ns/a', pod('a'))
    for (let i = 2; i <= 10; i++) {
      await s.guaranteedUpdate('/registry/pods/ns/a', (cur) => ({ ...cur, spec: { image: `nginx:${i}` } }))
    }
    const current = await s.currentRevision()
    const oldest = current - 5
    const old = s.watch('/registry/pods/', { resourceVersion: first.metadata.resourceVersion! })
    await assert.rejects(old[Symbol.asyncIterator]().next(), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.equal(err.code, 'Compacted')
      assert.equal(err.message, `too old resource version: ${first.metadata.resourceVersion} (${oldest})`)
      assert.equal(err.revision, oldest)
      return true
    })
    await assert.rejects(
      s.get('/registry/pods/ns/a', { resourceVersion: String(oldest - 1), resourceVersionMatch: 'Exact' }),
      (err: unknown) => err instanceof StorageError && err.code === 'Compacted',
    )
    const atOldest = await s.get('/registry/pods/ns/a', { resourceVersion: String(oldest), resourceVersionMatch: 'Exact' })
    assert.equal(atOldest?.metadata.resourceVersion, String(oldest))

    const recent = s.watch('/registry/pods/', { resourceVersion: String(oldest) })
    const it = recent[Symbol.asyncIterator]()
    const replayed: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await it.next()
      replayed.push(String(r.value?.revision))
    }
    assert.deepEqual(replayed, [1, 2, 3, 4, 5].map((d) => String(oldest + d)))
    recent.stop()
  })

  it('drops deleted keys from old snapshots once their history is compacted', async () => {
    const s = new MemoryStorage({ historyLimit: 2 })
    await s.create('/registry/pods/ns/a', pod('a'))
    await s.delete('/registry/pods/ns/a')
    await s.create('/registry/pods/ns/b', pod('b'))
    await s.create('/registry/pods/ns/c', pod('c'))
    await s.create('/registry/pods/ns/d', pod('d'))
    const list = await s.list('/registry/pods/')
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      ['b', 'c', 'd'],
    )
    assert.equal(await s.count('/registry/pods/'), 3)
  })

  it('continues a compacted list at the latest revision with the token reissued for the 410', async () => {
    const s = new MemoryStorage()
    for (const n of ['a', 'b', 'c']) await s.create(`/registry/pods/ns/${n}`, pod(n))
    const p1 = await s.list('/registry/pods/', { limit: 1 })
    await s.guaranteedUpdate('/registry/pods/ns/b', (cur) => ({ ...cur, spec: { image: 'nginx:2' } }))
    s.compact(await s.currentRevision())
    await assert.rejects(s.list('/registry/pods/', { continue: p1.continue! }), (err: unknown) => {
      return err instanceof StorageError && err.code === 'Compacted'
    })
    const rest = await s.list('/registry/pods/', { continue: reissueAtLatest(p1.continue!, '/registry/pods/') })
    assert.deepEqual(
      rest.items.map((o) => [o.metadata.name, o.spec]),
      [
        ['b', { image: 'nginx:2' }],
        ['c', { image: 'nginx:1' }],
      ],
    )
    assert.equal(rest.revision, await s.currentRevision())
  })

  it('pages through ten thousand objects in key order, each once', async () => {
    const s = new MemoryStorage()
    const keys: string[] = []
    for (let i = 0; i < 10000; i++) keys.push(`/registry/pods/ns/p${String((i * 7919) % 10000).padStart(5, '0')}`)
    for (const k of keys) await s.create(k, pod(k.slice(k.lastIndexOf('/') + 1)))
    const seen: string[] = []
    let token: string | undefined
    do {
      const page = await s.list('/registry/pods/', token ? { limit: 500, continue: token } : { limit: 500 })
      for (const o of page.items) seen.push(o.metadata.name ?? '')
      token = page.continue
    } while (token)
    assert.equal(seen.length, 10000)
    assert.deepEqual(seen, [...seen].sort())
    assert.equal(new Set(seen).size, 10000)
  })

  it('hands stored objects to predicates frozen, so a predicate cannot change them', async () => {
    const s = new MemoryStorage()
    await s.create('/registry/pods/ns/a', pod('a'))
    await assert.rejects(
      s.list('/registry/pods/', {
        predicate: (o) => {
          o.metadata.name = 'changed'
          return true
        },
      }),
      TypeError,
    )
    assert.equal((await s.get('/registry/pods/ns/a'))?.metadata.name, 'a')
  })
})
