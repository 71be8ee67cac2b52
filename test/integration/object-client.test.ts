/**
 * The server's own client: each call is a request through the whole chain,
 * so what a controller writes is authorized and admitted as any client's.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer } from '../../core/server.js'
import { configMaps } from '../../core/resources/core/configmaps.js'
import { replicaSets } from '../../core/resources/groups/apps.js'
import { StatusError } from '../../core/machinery/status-error.js'
import type { KubeObject } from '../../core/machinery/object.js'

const rejection = async (call: Promise<unknown>): Promise<StatusError> => {
  try {
    await call
  } catch (err) {
    assert.ok(err instanceof StatusError, `not a StatusError: ${String(err)}`)
    return err
  }
  assert.fail('the call succeeded')
}

describe('ObjectClient', () => {
  it('creates, reads, lists, updates, patches, watches and deletes through the API', async () => {
    const server = createApiServer()
    await server.ready
    const { client } = server
    const created = await client.create(configMaps, 'default', { metadata: { name: 'one' }, data: { a: '1' } })
    assert.equal(created['kind'], 'ConfigMap')
    assert.ok(created.metadata.uid)

    const watch = await client.watch(configMaps, 'default', { resourceVersion: created.metadata.resourceVersion! })
    const events: string[] = []
    const followed = (async () => {
      for await (const event of watch) {
        events.push(`${event.type} ${JSON.stringify(event.object['data'])}`)
        if (event.type === 'DELETED') break
      }
    })()

    assert.deepEqual((await client.get(configMaps, 'default', 'one'))['data'], { a: '1' })
    assert.deepEqual((await client.list(configMaps, 'default')).items.map((o) => o.metadata.name), ['one'])
    const updated = await client.update(configMaps, 'default', { ...created, data: { a: '2' } })
    assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion)
    await client.patch(configMaps, 'default', 'one', 'merge', { data: { b: '3' } })
    await client.delete(configMaps, 'default', 'one')
    await followed
    assert.deepEqual(events, ['MODIFIED {"a":"2"}', 'MODIFIED {"a":"2","b":"3"}', 'DELETED {"a":"2","b":"3"}'])
    await server.shutdown()
  })

  it('reads and writes a scale subresource and reads discovery, as an autoscaler does', async () => {
    const server = createApiServer()
    await server.ready
    const { client } = server
    await client.create(replicaSets, 'default', {
      metadata: { name: 'rs' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'rs' } }, template: { metadata: { labels: { app: 'rs' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    })
    const scale = await client.getScale(replicaSets, 'default', 'rs')
    assert.deepEqual([scale['kind'], scale['spec'], (scale['status'] as { selector?: string }).selector], ['Scale', { replicas: 1 }, 'app=rs'])
    await client.updateScale(replicaSets, 'default', { ...scale, spec: { replicas: 3 } })
    assert.equal(((await client.get(replicaSets, 'default', 'rs'))['spec'] as { replicas: number }).replicas, 3)
    const apps = await client.resources('apps', 'v1')
    assert.ok(apps.resources.some((r) => r.name === 'replicasets/scale' && r.kind === 'Scale'))
    assert.ok((await client.resources('', 'v1')).resources.some((r) => r.name === 'pods' && r.kind === 'Pod'))
    await server.shutdown()
  })

  it('answers the server Status as a StatusError: a missing object, a conflict, admission refusing', async () => {
    const server = createApiServer()
    await server.ready
    const { client } = server
    const missing = await rejection(client.get(configMaps, 'default', 'nothing'))
    assert.equal(missing.code, 404)
    assert.equal(missing.reason, 'NotFound')
    assert.equal(missing.message, 'configmaps "nothing" not found')

    const created = await client.create(configMaps, 'default', { metadata: { name: 'one' } })
    await client.update(configMaps, 'default', { ...created, data: { a: '1' } })
    const stale = await rejection(client.update(configMaps, 'default', { ...created, data: { a: '2' } }))
    assert.equal(stale.code, 409)

    // NamespaceLifecycle refuses a namespace that does not exist: admission runs on the client's writes.
    const refused = await rejection(client.create(configMaps, 'nowhere', { metadata: { name: 'x' } }))
    assert.equal(refused.code, 404)
    assert.equal(refused.message, 'namespaces "nowhere" not found')
    await server.shutdown()
  })

  it('is authorized as its identity: a user without rights is refused and nothing is stored', async () => {
    const server = createApiServer({ authorizationModes: ['RBAC'] })
    await server.ready
    const stranger = server.client.as({ username: 'mallory', groups: ['system:authenticated'] })
    const denied = await rejection(stranger.create(configMaps, 'default', { metadata: { name: 'planted' } } as KubeObject))
    assert.equal(denied.code, 403)
    assert.equal(denied.reason, 'Forbidden')
    assert.match(denied.message, /User "mallory" cannot create resource "configmaps"/)
    const absent = await rejection(server.client.get(configMaps, 'default', 'planted'))
    assert.equal(absent.code, 404)
    await server.shutdown()
  })

  it('ends a watch with the ERROR event as a StatusError (a resourceVersion too old)', async () => {
    const server = createApiServer({ watchCache: false })
    await server.ready
    const { client } = server
    const first = await client.create(configMaps, 'default', { metadata: { name: 'one' } })
    const snapshot = await server.snapshot()
    await client.create(configMaps, 'default', { metadata: { name: 'two' } })
    await server.restore(snapshot)
    const watch = await client.watch(configMaps, 'default', { resourceVersion: first.metadata.resourceVersion! })
    const ended = await rejection((async () => {
      for await (const event of watch) void event
    })())
    assert.equal(ended.code, 410)
    await server.shutdown()
  })
})
