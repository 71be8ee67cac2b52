/**
 * The converting storage over a conversion that answers later (a custom
 * resource's webhook): every read comes out in the served version, every
 * write goes in stored, selectors page correctly, watch events keep order.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { VersionConversion } from '../../../core/resources/catalogue.js'
import { convertingStorage } from '../../../core/resources/conversion/storage.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { MemoryStorage } from '../../../core/storage/memory.js'
import type { StorageEvent } from '../../../core/storage/interface.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** v1 has spec.size; the stored v2 calls it spec.replicas. Each call waits a little, later calls less. */
function slowConversion(options: { selection?: boolean } = {}) {
  const calls = { toStorage: 0, fromStorage: 0, fromStorageAll: 0 }
  let delay = 12
  const wait = () => sleep(Math.max(0, (delay -= 3)))
  const toV2 = (o: KubeObject): KubeObject => {
    const { size, ...spec } = (o['spec'] ?? {}) as Record<string, unknown>
    return { ...o, apiVersion: 'example.com/v2', spec: { ...spec, replicas: size } }
  }
  const toV1 = (o: KubeObject): KubeObject => {
    const { replicas, ...spec } = (o['spec'] ?? {}) as Record<string, unknown>
    return { ...o, apiVersion: 'example.com/v1', spec: { ...spec, size: replicas } }
  }
  const conversion: VersionConversion = {
    storageVersion: 'example.com/v2',
    toStorage: async (o) => {
      calls.toStorage++
      await wait()
      return toV2(o)
    },
    fromStorage: async (o) => {
      calls.fromStorage++
      await wait()
      return toV1(o)
    },
    fromStorageAll: async (objs) => {
      calls.fromStorageAll++
      await wait()
      return objs.map(toV1)
    },
  }
  if (options.selection !== false) conversion.forSelection = (o) => ({ ...o, apiVersion: 'example.com/v1' })
  return { conversion, calls }
}

function widget(name: string, size: number, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'ns', labels }, spec: { size } }
}

const key = (name: string) => `/registry/example.com/widgets/ns/${name}`
const prefix = '/registry/example.com/widgets/ns/'

describe('converting storage with an asynchronous conversion', () => {
  it('stores in the storage version and answers creates, gets and lists in the served one', async () => {
    const backend = new MemoryStorage()
    const { conversion, calls } = slowConversion()
    const storage = convertingStorage(backend, conversion)

    const created = await storage.create(key('a'), widget('a', 3))
    assert.equal(created.apiVersion, 'example.com/v1')
    assert.deepEqual(created['spec'], { size: 3 })
    const stored = await backend.get(key('a'))
    assert.equal(stored?.apiVersion, 'example.com/v2')
    assert.deepEqual(stored?.['spec'], { replicas: 3 })

    const got = await storage.get(key('a'))
    assert.deepEqual(got?.['spec'], { size: 3 })
    assert.equal(await storage.get(key('missing')), undefined)

    await storage.create(key('b'), widget('b', 5))
    const listed = await storage.list(prefix)
    assert.deepEqual(
      listed.items.map((o) => [o.apiVersion, o.metadata.name, o['spec']]),
      [
        ['example.com/v1', 'a', { size: 3 }],
        ['example.com/v1', 'b', { size: 5 }],
      ],
    )
    assert.equal(calls.fromStorageAll, 1, 'a page of several objects is converted in one call')
  })

  it('hands the update function the served object and stores what it returns', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, slowConversion().conversion)
    await storage.create(key('a'), widget('a', 1))
    let seen: unknown
    const updated = await storage.guaranteedUpdate(key('a'), (current) => {
      seen = current['spec']
      return { ...current, spec: { size: 7 } }
    })
    assert.deepEqual(seen, { size: 1 })
    assert.deepEqual(updated['spec'], { size: 7 })
    assert.deepEqual((await backend.get(key('a')))?.['spec'], { replicas: 7 })
  })

  it('lets a delete validation see the served object and answers the deleted one served', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, slowConversion().conversion)
    await storage.create(key('a'), widget('a', 2))
    await assert.rejects(
      storage.delete(key('a'), {
        validate: (current) => {
          if ((current['spec'] as { size?: number }).size === 2) throw new Error('size 2 is kept')
        },
      }),
      /size 2 is kept/,
    )
    assert.ok(await backend.get(key('a')), 'a vetoed delete keeps the object')
    const deleted = await storage.delete(key('a'), { validate: () => {} })
    assert.deepEqual(deleted['spec'], { size: 2 })
    assert.equal(await backend.get(key('a')), undefined)
  })

  it('evaluates selectors on the synchronous view, so limited pages stay full and continue works', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, slowConversion().conversion)
    for (let i = 0; i < 6; i++) await storage.create(key(`w${i}`), widget(`w${i}`, i, { tier: i % 2 ? 'odd' : 'even' }))
    const predicate = (o: KubeObject) => o.apiVersion === 'example.com/v1' && o.metadata.labels?.['tier'] === 'odd'
    const first = await storage.list(prefix, { limit: 2, predicate })
    assert.deepEqual(
      first.items.map((o) => o.metadata.name),
      ['w1', 'w3'],
    )
    assert.ok(first.continue)
    const second = await storage.list(prefix, { limit: 2, predicate, continue: first.continue! })
    assert.deepEqual(
      second.items.map((o) => [o.metadata.name, o['spec']]),
      [['w5', { size: 5 }]],
    )
    assert.equal(second.continue, undefined)
  })

  it('refuses a selector when an asynchronous conversion offers no synchronous view', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, slowConversion({ selection: false }).conversion)
    await storage.create(key('a'), widget('a', 1))
    await assert.rejects(storage.list(prefix, { predicate: () => true }), /must offer forSelection/)
    // Without a selector nothing needs the view.
    assert.equal((await storage.list(prefix)).items.length, 1)
  })

  it('converts watch events one by one in their order, even when earlier conversions are slower', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, slowConversion().conversion)
    const controller = new AbortController()
    const watcher = storage.watch(prefix, {
      resourceVersion: String(await backend.currentRevision()),
      predicate: (o) => o.apiVersion === 'example.com/v1' && o.metadata.name !== 'skip',
      signal: controller.signal,
    })
    await backend.create(key('a'), { ...widget('a', 1), apiVersion: 'example.com/v2', spec: { replicas: 1 } })
    await backend.create(key('skip'), { ...widget('skip', 0), apiVersion: 'example.com/v2', spec: { replicas: 0 } })
    await backend.guaranteedUpdate(key('a'), (o) => ({ ...o, spec: { replicas: 2 } }))
    await backend.delete(key('a'))
    const events: StorageEvent[] = []
    for await (const event of watcher) {
      events.push(event)
      if (events.length === 3) break
    }
    watcher.stop()
    assert.deepEqual(
      events.map((e) => [e.type, e.object.apiVersion, e.object['spec']]),
      [
        ['ADDED', 'example.com/v1', { size: 1 }],
        ['MODIFIED', 'example.com/v1', { size: 2 }],
        ['DELETED', 'example.com/v1', { size: 2 }],
      ],
    )
    assert.ok(events[0]!.revision < events[1]!.revision && events[1]!.revision < events[2]!.revision)
  })

  it('surfaces a failed conversion of a read as the error of that read', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, {
      storageVersion: 'example.com/v2',
      toStorage: (o) => ({ ...o, apiVersion: 'example.com/v2' }),
      fromStorage: () => Promise.reject(new Error('webhook down')),
      forSelection: (o) => o,
    })
    await backend.create(key('a'), { ...widget('a', 1), apiVersion: 'example.com/v2' })
    await assert.rejects(storage.get(key('a')), /webhook down/)
    await assert.rejects(storage.list(prefix), /webhook down/)
    await assert.rejects(storage.create(key('b'), widget('b', 1)), /webhook down/)
    // The create itself went through; only its answer could not be converted, as upstream.
    assert.ok(await backend.get(key('b')))
  })
})

describe('converting storage with a synchronous conversion', () => {
  it('still converts gets, lists with selectors and watches as before', async () => {
    const backend = new MemoryStorage()
    const storage = convertingStorage(backend, {
      storageVersion: 'example.com/v2',
      toStorage: (o) => ({ ...o, apiVersion: 'example.com/v2' }),
      fromStorage: (o) => ({ ...o, apiVersion: 'example.com/v1' }),
    })
    await storage.create(key('a'), widget('a', 1))
    assert.equal((await backend.get(key('a')))?.apiVersion, 'example.com/v2')
    assert.equal((await storage.get(key('a')))?.apiVersion, 'example.com/v1')
    const listed = await storage.list(prefix, { predicate: (o) => o.apiVersion === 'example.com/v1' })
    assert.equal(listed.items.length, 1)
    const watcher = storage.watch(prefix, { resourceVersion: '0' })
    for await (const event of watcher) {
      assert.equal(event.object.apiVersion, 'example.com/v1')
      break
    }
    watcher.stop()
  })
})
