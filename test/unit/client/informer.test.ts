import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InformerFactory } from '../../../core/client/informer-factory.js'
import { SharedInformer } from '../../../core/client/informer.js'
import { storageListWatch } from '../../../core/client/list-watch.js'
import { silentLogger } from '../../../core/logging/logger.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const PREFIX = '/registry/configmaps/'
const stored = (storage: MemoryStorage) => ({
  storage,
  prefix: (ns: string) => (ns ? `${PREFIX}${ns}/` : PREFIX),
  key: (ns: string, name: string) => `${PREFIX}${ns}/${name}`,
})
const configMap = (namespace: string, name: string, data: Record<string, string> = {}): KubeObject => ({ metadata: { namespace, name }, data })

/** Resolves once `check` holds, looking after each turn of the event loop (a watch event is a few turns away). */
async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2))
  assert.ok(check(), 'the informer never caught up')
}

describe('SharedInformer', () => {
  it('lists, then follows the watch: adds, updates and deletes reach the lister and the handlers', async () => {
    const storage = new MemoryStorage()
    await storage.create(`${PREFIX}a/one`, configMap('a', 'one'))
    const informer = new SharedInformer(storageListWatch(() => stored(storage)), silentLogger)
    assert.equal(informer.hasSynced(), false)
    await informer.ready
    assert.equal(informer.hasSynced(), true)
    assert.deepEqual(informer.list('a').map((o) => o.metadata.name), ['one'])

    const seen: string[] = []
    informer.addHandlers({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onUpdate: (before, after) => seen.push(`update ${before.metadata.name} ${JSON.stringify(after['data'])}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    })
    await storage.create(`${PREFIX}b/two`, configMap('b', 'two'))
    await storage.guaranteedUpdate(`${PREFIX}a/one`, () => configMap('a', 'one', { k: 'v' }))
    await storage.delete(`${PREFIX}b/two`)
    await eventually(() => seen.length === 4)
    assert.deepEqual(seen, ['add one', 'add two', 'update one {"k":"v"}', 'delete two'])
    assert.equal(informer.get('b', 'two'), undefined)
    assert.deepEqual(informer.get('a', 'one')?.['data'], { k: 'v' })
    informer.stop()
  })

  it('lists again when its watch ends, and reports what went missing meanwhile as deleted', async () => {
    const storage = new MemoryStorage()
    await storage.create(`${PREFIX}a/kept`, configMap('a', 'kept'))
    const before = storage.snapshot()
    await storage.create(`${PREFIX}a/gone`, configMap('a', 'gone'))
    const informer = new SharedInformer(storageListWatch(() => stored(storage)), silentLogger)
    await informer.ready
    const deleted: string[] = []
    informer.addHandlers({ onDelete: (o) => deleted.push(o.metadata.name ?? '') })
    // A restore ends every watch as a compaction does: the informer lists the restored state.
    storage.restore(before)
    await eventually(() => deleted.length === 1)
    assert.deepEqual(deleted, ['gone'])
    assert.deepEqual(informer.list().map((o) => o.metadata.name), ['kept'])
    informer.stop()
  })

  it('answers a custom index without a scan, kept current as objects change', async () => {
    const storage = new MemoryStorage()
    await storage.create(`${PREFIX}a/one`, configMap('a', 'one', { node: 'n1' }))
    const informer = new SharedInformer(storageListWatch(() => stored(storage)), silentLogger)
    await informer.ready
    informer.addIndex('node', (o) => [String((o['data'] as Record<string, string>)['node'])])
    assert.deepEqual(informer.byIndex('node', 'n1').map((o) => o.metadata.name), ['one'])
    await storage.guaranteedUpdate(`${PREFIX}a/one`, () => configMap('a', 'one', { node: 'n2' }))
    await eventually(() => informer.byIndex('node', 'n2').length === 1)
    assert.deepEqual(informer.byIndex('node', 'n1'), [])
    await storage.delete(`${PREFIX}a/one`)
    await eventually(() => informer.byIndex('node', 'n2').length === 0)
    assert.throws(() => informer.byIndex('zone', 'x'), /no index named zone/)
    informer.stop()
  })

  it('reads a name it lacks from the source itself', async () => {
    const storage = new MemoryStorage()
    const informer = new SharedInformer(storageListWatch(() => stored(storage)), silentLogger)
    await informer.ready
    informer.stop()
    await storage.create(`${PREFIX}a/late`, configMap('a', 'late'))
    assert.equal(informer.get('a', 'late'), undefined)
    assert.equal((await informer.read('a', 'late'))?.metadata.name, 'late')
  })

  it('rejects `ready` when its first list fails, and keeps listing until its source answers', async () => {
    const storage = new MemoryStorage()
    let served = false
    const informer = new SharedInformer(
      storageListWatch(() => {
        if (!served) throw new Error('not served')
        return stored(storage)
      }),
      silentLogger,
    )
    await assert.rejects(informer.ready, /not served/)
    assert.equal(informer.hasSynced(), false)
    served = true
    // The informer's retry timer does not hold the process open; this one does until the list is in.
    const keepAlive = setInterval(() => {}, 10)
    await informer.synced
    clearInterval(keepAlive)
    assert.equal(informer.hasSynced(), true)
    informer.stop()
  })
})

describe('InformerFactory', () => {
  it('shares one informer per group, version and resource, and stops them all', async () => {
    const storage = new MemoryStorage()
    const asked: string[] = []
    const factory = new InformerFactory((resource) => {
      asked.push(`${resource.group}/${resource.resource}`)
      return storageListWatch(() => stored(storage))
    }, silentLogger)
    const one = factory.informer({ group: '', version: 'v1', resource: 'configmaps' })
    assert.equal(factory.informer({ group: '', version: 'v1', resource: 'configmaps' }), one)
    assert.notEqual(factory.informer({ group: 'apps', version: 'v1', resource: 'configmaps' }), one)
    assert.notEqual(factory.informer({ group: '', version: 'v2', resource: 'configmaps' }), one)
    assert.deepEqual(asked, ['/configmaps', 'apps/configmaps', '/configmaps'])
    await factory.synced()
    factory.stop()
    await storage.create(`${PREFIX}a/after`, configMap('a', 'after'))
    await new Promise((r) => setTimeout(r, 20))
    assert.equal(one.get('a', 'after'), undefined)
  })
})
