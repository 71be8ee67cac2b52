/**
 * The storage size poller: each cluster's answer becomes
 * `apiserver_storage_size_bytes{storage_cluster_id="etcd-<n>"}`, main store
 * first; a cluster that cannot answer keeps its last figure, and a failed
 * query changes nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Metrics } from '../../../core/metrics/metrics.js'
import { pollStorageSizes, startStorageSizePoller } from '../../../core/metrics/storage-size.js'
import { silentLogger } from '../../../core/logging/logger.js'

const NAME = 'apiserver_storage_size_bytes'

describe('storage size metric', () => {
  it('numbers the clusters as upstream does, main store first', async () => {
    const metrics = new Metrics()
    await pollStorageSizes(async () => [4096, 8192], metrics, silentLogger)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-0' }), 4096)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-1' }), 8192)
  })

  it('keeps the last figure of a cluster that did not answer, and of all when the query fails', async () => {
    const metrics = new Metrics()
    await pollStorageSizes(async () => [100, 200], metrics, silentLogger)
    await pollStorageSizes(async () => [150, undefined], metrics, silentLogger)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-0' }), 150)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-1' }), 200)
    await pollStorageSizes(() => Promise.reject(new Error('down')), metrics, silentLogger)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-0' }), 150)
  })

  it('never asks with an interval of 0 or without a way to ask', () => {
    const metrics = new Metrics()
    let asked = 0
    startStorageSizePoller(async () => [asked++], metrics, 0, silentLogger)()
    startStorageSizePoller(undefined, metrics, 1000, silentLogger)()
    assert.equal(asked, 0)
    assert.equal(metrics.value(NAME, { storage_cluster_id: 'etcd-0' }), undefined)
  })
})
