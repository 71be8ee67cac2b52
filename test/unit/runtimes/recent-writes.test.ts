import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { RecentWrites } from '../../../runtimes/node/storage/recent-writes.js'

const configMap = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: '7' }, data: { value } })

describe('the objects of recent writes, for their watch events', () => {
  it('gives the object written at a key and revision once, as a copy the writer cannot change', () => {
    const writes = new RecentWrites()
    const written = configMap('a', 'one')
    writes.remember('/registry/configmaps/ns/a', 7, written, 100)
    written.data = { value: 'changed by the writer' }
    const taken = writes.take('/registry/configmaps/ns/a', 7)
    assert.deepEqual(taken, configMap('a', 'one'))
    assert.equal(writes.take('/registry/configmaps/ns/a', 7), undefined)
  })

  it('gives nothing for another revision of the key, and a later write replaces an earlier one', () => {
    const writes = new RecentWrites()
    writes.remember('/k', 7, configMap('a', 'one'), 100)
    assert.equal(writes.take('/k', 8), undefined)
    writes.remember('/k', 9, configMap('a', 'two'), 100)
    assert.equal(writes.take('/k', 7), undefined)
    assert.deepEqual(writes.take('/k', 9)?.['data'], { value: 'two' })
  })

  it('lets the oldest go beyond its budget of bytes, and keeps nothing larger than the budget', () => {
    const writes = new RecentWrites(250)
    writes.remember('/first', 1, configMap('first', '1'), 100)
    writes.remember('/second', 2, configMap('second', '2'), 100)
    writes.remember('/third', 3, configMap('third', '3'), 100)
    writes.remember('/huge', 4, configMap('huge', '4'), 251)
    assert.equal(writes.take('/first', 1), undefined)
    assert.equal(writes.take('/huge', 4), undefined)
    assert.equal(writes.take('/second', 2)?.metadata.name, 'second')
    assert.equal(writes.take('/third', 3)?.metadata.name, 'third')
  })

  it('shows the object last written at a key when it is newer than a revision, and still gives it to the watch', () => {
    const writes = new RecentWrites()
    writes.remember('/k', 9, configMap('a', 'two'), 100)
    assert.equal(writes.newerThan('/k', 9), undefined)
    assert.equal(writes.newerThan('/other', 1), undefined)
    assert.deepEqual(writes.newerThan('/k', 7)?.['data'], { value: 'two' })
    assert.deepEqual(writes.take('/k', 9)?.['data'], { value: 'two' })
    assert.equal(writes.newerThan('/k', 7), undefined, 'taken: the watch cache has it now')
  })
})
