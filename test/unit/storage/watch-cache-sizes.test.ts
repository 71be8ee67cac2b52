import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseWatchCacheSizes, watchCacheEnabled } from '../../../core/storage/watch-cache-sizes.js'

describe('--watch-cache-sizes', () => {
  it('reads resource[.group]#size settings, the group left out for the core API', () => {
    assert.deepEqual(parseWatchCacheSizes(['secrets#0', 'deployments.apps#100', 'configmaps#+5']), {
      secrets: 0,
      'deployments.apps': 100,
      configmaps: 5,
    })
    assert.deepEqual(parseWatchCacheSizes([]), {})
  })

  it('refuses malformed settings with upstream wording', () => {
    assert.throws(() => parseWatchCacheSizes(['secrets']), { message: 'invalid value of watch cache size: secrets' })
    assert.throws(() => parseWatchCacheSizes(['secrets#1#2']), { message: 'invalid value of watch cache size: secrets#1#2' })
    assert.throws(() => parseWatchCacheSizes(['secrets#many']), { message: 'invalid size of watch cache size: secrets#many' })
    assert.throws(() => parseWatchCacheSizes(['secrets#-1']), { message: 'watch cache size cannot be negative: secrets#-1' })
  })

  it('turns the cache off for a resource only with size 0', () => {
    const sizes = { secrets: 0, 'deployments.apps': 0, configmaps: 100 }
    assert.equal(watchCacheEnabled(sizes, '', 'secrets'), false)
    assert.equal(watchCacheEnabled(sizes, 'apps', 'deployments'), false)
    assert.equal(watchCacheEnabled(sizes, '', 'configmaps'), true)
    assert.equal(watchCacheEnabled(sizes, '', 'namespaces'), true)
    assert.equal(watchCacheEnabled(sizes, 'other', 'secrets'), true, 'the group is part of the name')
  })
})
