import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DiscoveryMemo } from '../../../core/api/discovery-memo.js'
import { isDeepFrozen } from '../../../core/encoding/immutable.js'

describe('DiscoveryMemo', () => {
  it('builds a document once per generation of the catalogue, frozen, from a copy', () => {
    const catalogue = { generation: 1 }
    const memo = new DiscoveryMemo(catalogue)
    const verbs = ['get', 'list']
    let builds = 0
    const build = () => ((builds += 1), { resources: [{ name: 'pods', verbs }] })
    const first = memo.of('/api/v1', build)
    assert.equal(memo.of('/api/v1', build), first)
    assert.equal(builds, 1)
    assert.ok(isDeepFrozen(first))
    // The entries' own arrays are not frozen with the document.
    assert.equal(Object.isFrozen(verbs), false)
    catalogue.generation = 2
    assert.notEqual(memo.of('/api/v1', build), first)
    assert.equal(builds, 2)
  })

  it('keeps nothing for a document that does not exist', () => {
    const memo = new DiscoveryMemo({ generation: 0 })
    let builds = 0
    const missing = () => ((builds += 1), undefined)
    assert.equal(memo.of('/apis/nobody.example.com', missing), undefined)
    assert.equal(memo.of('/apis/nobody.example.com', missing), undefined)
    assert.equal(builds, 2)
  })
})
