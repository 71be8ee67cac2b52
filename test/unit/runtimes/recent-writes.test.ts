import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { RecentWrites } from '../../../runtimes/node/storage/recent-writes.js'

const configMap = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { value } })
const bytes = (text: string) => Buffer.from(text)

describe('the objects of recent writes, for their watch events', () => {
  it('gives the object of the bytes being written once, stamped with the revision of the event, as a copy the writer cannot change', () => {
    const writes = new RecentWrites()
    const written = configMap('a', 'one')
    const stored = bytes('one')
    writes.sending('/registry/configmaps/ns/a', stored, written, 100)
    written.data = { value: 'changed by the writer' }
    // The event may come before the write's answer: the bytes identify the write.
    const taken = writes.take('/registry/configmaps/ns/a', bytes('one'), 7)
    assert.deepEqual(taken, { ...configMap('a', 'one'), metadata: { name: 'a', resourceVersion: '7' } })
    assert.equal(writes.take('/registry/configmaps/ns/a', bytes('one'), 7), undefined)
  })

  it('gives nothing for other bytes at the key, and a later write replaces an earlier one', () => {
    const writes = new RecentWrites()
    const first = bytes('one')
    writes.sending('/k', first, configMap('a', 'one'), 100)
    writes.succeeded('/k', first, 7)
    assert.equal(writes.take('/k', bytes('another writer'), 8), undefined)
    const second = bytes('two')
    writes.sending('/k', second, configMap('a', 'two'), 100)
    assert.equal(writes.take('/k', bytes('one'), 7), undefined)
    assert.deepEqual(writes.take('/k', bytes('two'), 9)?.['data'], { value: 'two' })
  })

  it('forgets a write that failed, but not a later one of the same key', () => {
    const writes = new RecentWrites()
    const refused = bytes('refused')
    writes.sending('/k', refused, configMap('a', 'refused'), 100)
    writes.failed('/k', refused)
    assert.equal(writes.take('/k', bytes('refused'), 3), undefined)
    const later = bytes('later')
    writes.sending('/k', later, configMap('a', 'later'), 100)
    writes.failed('/k', refused)
    assert.equal(writes.take('/k', bytes('later'), 4)?.metadata.resourceVersion, '4')
  })

  it('lets the oldest go beyond its budget of bytes, and keeps nothing larger than the budget', () => {
    const writes = new RecentWrites(250)
    writes.sending('/first', bytes('1'), configMap('first', '1'), 100)
    writes.sending('/second', bytes('2'), configMap('second', '2'), 100)
    writes.sending('/third', bytes('3'), configMap('third', '3'), 100)
    writes.sending('/huge', bytes('4'), configMap('huge', '4'), 251)
    assert.equal(writes.take('/first', bytes('1'), 1), undefined)
    assert.equal(writes.take('/huge', bytes('4'), 4), undefined)
    assert.equal(writes.take('/second', bytes('2'), 2)?.metadata.name, 'second')
    assert.equal(writes.take('/third', bytes('3'), 3)?.metadata.name, 'third')
  })

  it('shows the object last written at a key once its write succeeded at a newer revision, and still gives it to the watch', () => {
    const writes = new RecentWrites()
    const stored = bytes('two')
    writes.sending('/k', stored, configMap('a', 'two'), 100)
    assert.equal(writes.newerThan('/k', 7), undefined, 'not known to have been written yet')
    writes.succeeded('/k', stored, 9)
    assert.equal(writes.newerThan('/k', 9), undefined)
    assert.equal(writes.newerThan('/other', 1), undefined)
    assert.deepEqual(writes.newerThan('/k', 7)?.metadata, { name: 'a', resourceVersion: '9' })
    assert.deepEqual(writes.take('/k', bytes('two'), 9)?.['data'], { value: 'two' })
    assert.equal(writes.newerThan('/k', 7), undefined, 'taken: the watch cache has it now')
  })
})
