/**
 * NamespaceLifecycle with a cache in front of the store: a create is checked
 * against the cached namespace, a namespace the cache lacks or has as
 * terminating is read from the store, and one this server was asked to
 * delete is read from the store until well after the cache must have heard.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { namespaceLifecycle } from '../../../core/admission/namespace-lifecycle.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'
import { namespaces } from '../../../core/resources/core/namespaces.js'
import { attrs, refusal } from './attributes.js'

const active = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } })
const terminating = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, deletionTimestamp: '2026-01-01T00:00:00Z' },
  status: { phase: 'Terminating' },
})
const configMap = (namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace } })

/** A store and a cache of namespaces, each a map the test sets, counting the store's reads. */
function world() {
  const store = new Map<string, KubeObject>()
  const cache = new Map<string, KubeObject>()
  let storeReads = 0
  let clock = 0
  const plugin = namespaceLifecycle(
    async (name) => {
      storeReads++
      return store.get(name)
    },
    { readCached: async (name) => cache.get(name), now: () => clock },
  )
  const create = (namespace: string) => refusal(() => plugin.admit(attrs(configMaps, 'CREATE', configMap(namespace))))
  const deleteNamespace = (name: string) => plugin.admit(attrs(namespaces, 'DELETE', undefined, { name, namespace: '' }))
  return { store, cache, create, deleteNamespace, reads: () => storeReads, advance: (ms: number) => (clock += ms) }
}

describe('NamespaceLifecycle with a namespace cache', () => {
  it('admits a create in a namespace the cache has as Active without reading the store', async () => {
    const w = world()
    w.cache.set('a', active('a'))
    w.store.set('a', active('a'))
    assert.equal(await w.create('a'), undefined)
    assert.equal(w.reads(), 0)
  })

  it('reads the store for a namespace the cache does not have yet, and refuses a missing one with 404', async () => {
    const w = world()
    w.store.set('new', active('new'))
    assert.equal(await w.create('new'), undefined)
    assert.deepEqual(await w.create('none'), { code: 404, message: 'namespaces "none" not found' })
  })

  it('refuses a create right after this server was asked to delete the namespace, while the cache still has it Active', async () => {
    const w = world()
    w.cache.set('going', active('going'))
    w.store.set('going', active('going'))
    await w.deleteNamespace('going')
    w.store.set('going', terminating('going'))
    assert.deepEqual(await w.create('going'), {
      code: 403,
      message: 'configmaps "x" is forbidden: unable to create new content in namespace going because it is being terminated',
    })
    // Upstream's 30 seconds later the cache is trusted again.
    w.advance(30_001)
    w.cache.set('going', terminating('going'))
    assert.equal((await w.create('going'))?.code, 403)
  })

  it('checks a namespace the cache has as terminating against the store (it may be gone: 404)', async () => {
    const w = world()
    w.cache.set('gone', terminating('gone'))
    assert.equal((await w.create('gone'))?.code, 404)
  })
})
