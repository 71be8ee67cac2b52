/**
 * The endpoints controller: a selector Service's Endpoints follow its pods'
 * IPs and readiness, with named target ports resolved per pod, and go with
 * the Service.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ObjectClient } from '../../core/client/object-client.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { hasStatusCode } from '../../core/machinery/status-error.js'
import { pods } from '../../core/resources/core/pods.js'
import { endpoints, services } from '../../core/resources/core/services.js'
import { endpointSlices } from '../../core/resources/groups/discovery.js'
import { createApiServer } from '../../core/server.js'

async function until<T>(what: string, read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  let last: T | undefined
  for (let i = 0; i < 1000; i++) {
    last = await read()
    if (holds(last)) return last
    await new Promise((r) => setTimeout(r, 5))
  }
  assert.fail(`gave up waiting: ${what}; last seen ${JSON.stringify(last)}`)
}

/** Creates a pod and writes the status a kubelet would: its IP, and Ready or not. */
async function runningPod(client: ObjectClient, name: string, ip: string, ready: boolean, labels: Record<string, string> = { app: 'web' }): Promise<KubeObject> {
  const created = await client.create(pods, 'default', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { nodeName: 'node-a', containers: [{ name: 'web', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
  })
  return client.updateStatus(pods, 'default', {
    ...created,
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  })
}

const subsetsOf = (client: ObjectClient) => async () => {
  try {
    return ((await client.get(endpoints, 'default', 'web'))['subsets'] ?? []) as { addresses?: { ip: string; targetRef: { name: string } }[]; notReadyAddresses?: { ip: string }[]; ports?: unknown[] }[]
  } catch (err) {
    if (hasStatusCode(err, 404)) return undefined
    throw err
  }
}

describe('the endpoints controller', () => {
  for (const modes of [undefined, ['RBAC']]) {
    it(`lists ready and not-ready pods with their resolved ports, follows them, and goes with the Service${modes ? ' (RBAC)' : ''}`, async () => {
      const server = createApiServer({ controllers: ['endpoint'], ...(modes ? { authorizationModes: modes } : {}) })
      await server.ready
      const { client } = server
      await client.create(services, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', labels: { tier: 'front' } },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      })
      const read = subsetsOf(client)
      assert.deepEqual(await until('empty Endpoints', read, (s) => s !== undefined), [])

      await runningPod(client, 'b', '10.0.0.2', true)
      await runningPod(client, 'a', '10.0.0.1', true)
      await runningPod(client, 'c', '10.0.0.3', false)
      await runningPod(client, 'other', '10.0.0.9', true, { app: 'other' })
      const subsets = await until('three pods listed', read, (s) => (s?.[0]?.addresses?.length ?? 0) === 2 && (s?.[0]?.notReadyAddresses?.length ?? 0) === 1)
      assert.deepEqual(subsets?.[0]?.addresses?.map((a) => [a.ip, a.targetRef.name]), [
        ['10.0.0.1', 'a'],
        ['10.0.0.2', 'b'],
      ])
      assert.deepEqual(subsets?.[0]?.notReadyAddresses?.map((a) => a.ip), ['10.0.0.3'])
      assert.deepEqual(subsets?.[0]?.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }])
      const stored = await client.get(endpoints, 'default', 'web')
      assert.deepEqual(stored.metadata.labels, { tier: 'front' })

      await client.delete(pods, 'default', 'a', { gracePeriodSeconds: 0 })
      await until('the deleted pod gone from the Endpoints', read, (s) => s?.[0]?.addresses?.map((a) => a.ip).join() === '10.0.0.2')

      await client.delete(services, 'default', 'web')
      await until('the Endpoints gone with the Service', read, (s) => s === undefined)
      await server.shutdown()
    })
  }

  it('leaves the Endpoints of a Service without a selector to their owner', async () => {
    const server = createApiServer({ controllers: ['endpoint'] })
    await server.ready
    const { client } = server
    await client.create(services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'external' }, spec: { ports: [{ port: 443 }] } })
    const mine = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'external' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 443 }] }] }
    await client.create(endpoints, 'default', mine)
    await new Promise((r) => setTimeout(r, 100))
    const kept = await client.get(endpoints, 'default', 'external')
    // As written, the port's protocol defaulted to TCP as upstream defaults it.
    assert.deepEqual(kept['subsets'], [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 443, protocol: 'TCP' }] }])
    await server.shutdown()
  })

  // Upstream's conformance spec "should test the lifecycle of an Endpoint" creates, updates and reads such Endpoints.
  it('leaves Endpoints that no Service has alone when they are updated', async () => {
    const server = createApiServer({ controllers: ['endpoint'] })
    await server.ready
    const { client } = server
    const created = await client.create(endpoints, 'default', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'static', labels: { 'test-endpoint-static': 'true' } },
      subsets: [{ addresses: [{ ip: '10.0.0.24' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
    })
    await client.update(endpoints, 'default', { ...created, metadata: { ...created.metadata, labels: { ...created.metadata.labels, 'test-service': 'updated' } } })
    await new Promise((r) => setTimeout(r, 100))
    const kept = await client.get(endpoints, 'default', 'static')
    assert.equal(kept.metadata.labels?.['test-service'], 'updated')
    await server.shutdown()
  })

  it('holds at most 1000 addresses, marked over capacity, and drops the mark once back under', async () => {
    const server = createApiServer({ controllers: ['endpoint'] })
    await server.ready
    const { client } = server
    await client.create(services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } })
    for (let i = 0; i < 1002; i++) await runningPod(client, `p-${i}`, `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`, true)
    const read = () => client.get(endpoints, 'default', 'web').catch((err: unknown): KubeObject => {
      if (hasStatusCode(err, 404)) return { metadata: {} }
      throw err
    })
    const full = await until('1000 addresses', read, (e) => ((e['subsets'] as { addresses?: unknown[] }[] | undefined)?.[0]?.addresses?.length ?? 0) === 1000)
    assert.equal(full.metadata.annotations?.['endpoints.kubernetes.io/over-capacity'], 'truncated')
    await client.delete(pods, 'default', 'p-0', { gracePeriodSeconds: 0 })
    await client.delete(pods, 'default', 'p-1', { gracePeriodSeconds: 0 })
    const under = await until('the mark dropped', read, (e) => e.metadata.annotations?.['endpoints.kubernetes.io/over-capacity'] === undefined)
    assert.equal((under['subsets'] as { addresses: unknown[] }[])[0]!.addresses.length, 1000)
    await server.shutdown()
  })
})

describe('the EndpointSlice controller', () => {
  it('keeps one slice per Service with its pods as endpoints and their conditions, owned by the Service', async () => {
    const server = createApiServer({ controllers: ['endpointslice'], authorizationModes: ['RBAC'] })
    await server.ready
    const { client } = server
    const service = await client.create(services, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    })
    const ours = async () => (await client.list(endpointSlices, 'default', { labelSelector: 'kubernetes.io/service-name=web' })).items
    await until('an empty slice', ours, (items) => items.length === 1)
    await runningPod(client, 'a', '10.0.0.1', true)
    await runningPod(client, 'b', '10.0.0.2', false)
    const [slice] = await until('two endpoints', ours, (items) => ((items[0]?.['endpoints'] as unknown[] | undefined)?.length ?? 0) === 2)
    assert.equal(slice?.['addressType'], 'IPv4')
    assert.deepEqual(slice?.['ports'], [{ name: 'http', port: 8080, protocol: 'TCP' }])
    assert.deepEqual(
      (slice?.['endpoints'] as { addresses: string[]; conditions: unknown; nodeName: string; targetRef: { name: string } }[]).map((e) => [e.addresses, e.conditions, e.nodeName, e.targetRef.name]),
      [
        [['10.0.0.1'], { ready: true, serving: true, terminating: false }, 'node-a', 'a'],
        [['10.0.0.2'], { ready: false, serving: false, terminating: false }, 'node-a', 'b'],
      ],
    )
    assert.equal(slice?.metadata.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io')
    assert.deepEqual(slice?.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]), [['Service', 'web', service.metadata.uid, true]])

    await client.delete(pods, 'default', 'a', { gracePeriodSeconds: 0 })
    await until('one endpoint left', ours, (items) => ((items[0]?.['endpoints'] as unknown[] | undefined)?.length ?? 0) === 1 && items.length === 1)
    await client.delete(services, 'default', 'web')
    await until('the slice gone with the Service', ours, (items) => items.length === 0)
    await server.shutdown()
  })

  it('makes again a slice deleted as soon as it was made', async () => {
    const server = createApiServer({ controllers: ['endpointslice'] })
    await server.ready
    const { client } = server
    try {
      await client.create(services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } })
      const ours = async () => (await client.list(endpointSlices, 'default', { labelSelector: 'kubernetes.io/service-name=web' })).items
      const [first] = await until('a slice', ours, (items) => items.length === 1)
      await client.delete(endpointSlices, 'default', first!.metadata.name ?? '')
      await until('another slice', ours, (items) => items.length === 1 && items[0]!.metadata.name !== first!.metadata.name)
    } finally {
      await server.shutdown()
    }
  })

  it('puts a new pod in the slice with room and rewrites no other', async () => {
    const server = createApiServer({ controllers: ['endpointslice'] })
    await server.ready
    const { client } = server
    await client.create(services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } })
    for (let i = 0; i < 250; i++) await runningPod(client, `p-${String(i).padStart(3, '0')}`, `10.2.${Math.floor(i / 200)}.${(i % 200) + 1}`, true)
    const ours = async () => (await client.list(endpointSlices, 'default', { labelSelector: 'kubernetes.io/service-name=web' })).items
    const count = (slice: KubeObject): number => ((slice['endpoints'] as unknown[] | undefined) ?? []).length
    const before = await until('250 endpoints in three slices', ours, (items) => items.length === 3 && items.reduce((n, s) => n + count(s), 0) === 250)
    // Its name sorts first: slices packed by name order would all shift by one.
    await runningPod(client, 'a-first', '10.2.9.1', true)
    const after = await until('251 endpoints', ours, (items) => items.reduce((n, s) => n + count(s), 0) === 251)
    const rewritten = after.filter((s) => before.find((b) => b.metadata.name === s.metadata.name)?.metadata.resourceVersion !== s.metadata.resourceVersion)
    assert.deepEqual(rewritten.map(count), [51], 'the slices rewritten, by their endpoints')
    await server.shutdown()
  })

})
