/** A MemoryStorage snapshot as text and back (snapshotText, snapshotFromText): how start-up templates outlive a process. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage, snapshotFromText, snapshotText } from '../../../core/storage/memory.js'
import { identityTransformer } from '../../../core/storage/value/transformer.js'

const configMap = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { value } })

describe('a memory snapshot as text', () => {
  it('restores, in another store, every kept key with its object and resourceVersion, frozen, at a later revision', async () => {
    const source = new MemoryStorage()
    await source.create('/registry/configmaps/default/a', configMap('a', 'one'))
    await source.create('/registry/configmaps/default/b', configMap('b', 'two'))
    await source.guaranteedUpdate('/registry/configmaps/default/a', async (obj) => ({ ...obj, data: { value: 'three' } }))
    const text = snapshotText(source.snapshot())!

    const target = new MemoryStorage()
    target.restore(snapshotFromText(text))
    const [a, b] = await Promise.all(['a', 'b'].map((n) => source.get(`/registry/configmaps/default/${n}`)))
    const list = await target.list('/registry/configmaps/default/', {})
    assert.deepEqual(list.items, [a, b])
    assert.ok(list.revision > Number(a!.metadata.resourceVersion), 'the restored store begins past the kept revisions')
    const held = await target.get('/registry/configmaps/default/a', { readOnly: true })
    assert.ok(Object.isFrozen(held?.data), 'a restored object is not frozen as the store holds its objects')
  })

  it('is no text where values are a transformer’s bytes, and text of another layout is refused', async () => {
    const sealed = new MemoryStorage({ transformerFor: () => identityTransformer })
    await sealed.create('/registry/configmaps/default/a', configMap('a', 'one'))
    assert.equal(snapshotText(sealed.snapshot()), undefined)
    for (const text of ['', '{}', '{"format":2,"revision":1,"held":[]}', '{"format":1,"revision":1,"held":[["k", 1, null]]}', '{"format":1,"revision":"1","held":[]}']) {
      assert.throws(() => snapshotFromText(text), Error, text)
    }
  })
})
