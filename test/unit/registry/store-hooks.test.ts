/**
 * The store's begin and finish hooks (upstream's BeginCreate/BeginUpdate):
 * begun once admission and validation passed, finished with the write's
 * outcome, so that a failed write or a dry run gives back what it took.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RequestContext } from '../../../core/registry/request-context.js'
import type { StoreHooks } from '../../../core/registry/store-hooks.js'
import { ResourceStore } from '../../../core/registry/store.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'
import { allocationHooks, ServiceAllocator } from '../../../core/resources/core/service-allocation.js'
import { services } from '../../../core/resources/core/services.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const NOW = new Date('2026-01-02T03:04:05Z')
const ctx = (dryRun = false): RequestContext => ({ user: { username: 'admin', groups: ['system:masters'] }, now: NOW, dryRun })

/** Hooks that record each begin and its finish. */
function recording(): { hooks: StoreHooks; log: string[] } {
  const log: string[] = []
  return {
    log,
    hooks: {
      beginCreate: (obj) => {
        log.push(`begin create ${obj.metadata.name}`)
        return (ok) => log.push(`finish ${ok}`)
      },
      beginUpdate: (obj) => {
        log.push(`begin update ${obj.metadata.name}`)
        return (ok) => log.push(`finish ${ok}`)
      },
      afterDelete: (obj) => log.push(`deleted ${obj.metadata.name}`),
    },
  }
}

describe('the store hooks', () => {
  it('finish a stored create and update with true, and tell of a delete', async () => {
    const { hooks, log } = recording()
    const store = new ResourceStore(configMaps, new MemoryStorage(), '/registry', {}, hooks)
    await store.create('default', { metadata: { name: 'a' } }, ctx())
    await store.update('default', 'a', (cur) => ({ ...cur, data: { k: 'v' } }), ctx())
    await store.delete('default', 'a', {}, ctx())
    assert.deepEqual(log, ['begin create a', 'finish true', 'begin update a', 'finish true', 'deleted a'])
  })

  it('finish a failed write and a dry run with false, and never begin a write that fails validation', async () => {
    const { hooks, log } = recording()
    const store = new ResourceStore(configMaps, new MemoryStorage(), '/registry', {}, hooks)
    await store.create('default', { metadata: { name: 'a' } }, ctx())
    log.length = 0
    await assert.rejects(store.create('default', { metadata: { name: 'a' } }, ctx()), { code: 409 })
    await store.create('default', { metadata: { name: 'b' } }, ctx(true))
    await store.update('default', 'a', (cur) => ({ ...cur, data: { k: 'v' } }), ctx(true))
    await assert.rejects(store.create('default', { metadata: { name: 'Bad_Name' } }, ctx()), { code: 422 })
    assert.deepEqual(log, ['begin create a', 'finish false', 'begin create b', 'finish false', 'begin update a', 'finish false'])
  })

  it('give a retried update\'s takings back before it begins again', async () => {
    const { hooks, log } = recording()
    const storage = new MemoryStorage()
    const store = new ResourceStore(configMaps, storage, '/registry', {}, hooks)
    await store.create('default', { metadata: { name: 'a' } }, ctx())
    log.length = 0
    let raced = false
    await store.update(
      'default',
      'a',
      (cur) => {
        // The first attempt loses a race with another write, so the storage runs it again.
        if (!raced) {
          raced = true
          void storage.guaranteedUpdate('/registry/configmaps/default/a', (c) => ({ ...c, data: { other: 'w' } }))
        }
        return { ...cur, metadata: { ...cur.metadata, resourceVersion: '' }, data: { k: 'v' } }
      },
      ctx(),
    )
    assert.ok(log.length >= 4, `no retry happened: ${log.join(", ")}`)
    assert.deepEqual(log.slice(-2), ['begin update a', 'finish true'])
    // Every begin but the last was finished false before the next began.
    for (let i = 0; i < log.length - 2; i += 2) assert.deepEqual(log.slice(i, i + 2), ['begin update a', 'finish false'])
  })

  it('give a service\'s cluster IP back when its create fails, so another service can take it', async () => {
    const allocator = new ServiceAllocator(['10.0.0.0/24'])
    const store = new ResourceStore(services, new MemoryStorage(), '/registry', {}, allocationHooks(allocator))
    const svc = (name: string) => ({ metadata: { name }, spec: { clusterIP: '10.0.0.10', ports: [{ port: 80 }] } })
    await store.create('default', svc('first'), ctx())
    // The same name again: the IP is taken before the write fails with 409, then given back.
    await assert.rejects(store.create('default', { metadata: { name: 'first' }, spec: { clusterIP: '10.0.0.11', ports: [{ port: 80 }] } }, ctx()), { code: 409 })
    const second = await store.create('default', { metadata: { name: 'second' }, spec: { clusterIP: '10.0.0.11', ports: [{ port: 80 }] } }, ctx())
    assert.equal((second['spec'] as Record<string, unknown>)['clusterIP'], '10.0.0.11')
    // A dry run takes nothing either.
    await store.create('default', { metadata: { name: 'third' }, spec: { clusterIP: '10.0.0.12', ports: [{ port: 80 }] } }, ctx(true))
    await store.create('default', { metadata: { name: 'fourth' }, spec: { clusterIP: '10.0.0.12', ports: [{ port: 80 }] } }, ctx())
    // A deleted service's IP is free again.
    await store.delete('default', 'first', {}, ctx())
    const fifth = await store.create('default', svc('fifth'), ctx())
    assert.equal((fifth['spec'] as Record<string, unknown>)['clusterIP'], '10.0.0.10')
  })
})
