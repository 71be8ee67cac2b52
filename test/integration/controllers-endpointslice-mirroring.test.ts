/**
 * The EndpointSlice mirroring controller: the hand-written Endpoints of a
 * Service without a selector are mirrored into EndpointSlices through
 * create, update and delete (upstream's conformance spec "EndpointSliceMirroring
 * should mirror a custom Endpoints resource through create update and delete").
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ObjectClient } from '../../core/client/object-client.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { events as eventsEntry } from '../../core/resources/core/events.js'
import { endpoints, services } from '../../core/resources/core/services.js'
import { endpointSlices } from '../../core/resources/groups/discovery.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { createApiServer } from '../../core/server.js'
import { eventually } from './harness.js'

const mirrored = async (client: ObjectClient, service: string): Promise<KubeObject[]> =>
  (await client.list(endpointSlices, 'default', { labelSelector: `kubernetes.io/service-name=${service}` })).items

const selectorless = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'example', port: 80, protocol: 'TCP' }] } })

/** Waits until the Service's slices satisfy `holds`; answers them. */
/** Runs `test` against a server running the mirroring controller (with `options` besides), shut down after. */
async function withMirroring(test: (client: ObjectClient) => Promise<void>, options: ApiServerOptions = {}): Promise<void> {
  const server = createApiServer({ controllers: ['endpointslicemirroring'], ...options })
  await server.ready
  try {
    await test(server.client)
  } finally {
    await server.shutdown()
  }
}

async function slicesUntil(client: ObjectClient, service: string, what: string, holds: (items: KubeObject[]) => boolean): Promise<KubeObject[]> {
  let items: KubeObject[] = []
  await eventually(what, async () => holds((items = await mirrored(client, service))))
  return items
}

/** Gives the controller time to act on a change it should leave alone: a later change it does act on has been seen. */
async function settled(client: ObjectClient): Promise<void> {
  const name = `marker-${Math.random().toString(36).slice(2, 8)}`
  await client.create(services, 'default', selectorless(name))
  await client.create(endpoints, 'default', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80 }] }] })
  await slicesUntil(client, name, 'the marker mirrored', (items) => items.length === 1)
}

describe('the EndpointSlice mirroring controller', () => {
  for (const modes of [undefined, ['RBAC']]) {
    it(`mirrors a custom Endpoints through create, update and delete${modes ? ' (RBAC)' : ''}`, async () => {
      await withMirroring(async (client) => {
        await client.create(services, 'default', selectorless('example-custom-endpoints'))
        const made = await client.create(endpoints, 'default', {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: {
            name: 'example-custom-endpoints',
            labels: { team: 'a' },
            annotations: { note: 'kept', 'endpoints.kubernetes.io/last-change-trigger-time': '2024-01-01T00:00:00Z' },
          },
          subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.1.2.3', nodeName: 'node-a' }], notReadyAddresses: [{ ip: '10.1.2.4', hostname: 'spare' }] }],
        })
        const [slice, ...more] = await slicesUntil(client, 'example-custom-endpoints', 'one mirrored slice', (items) => items.length === 1)
        assert.equal(more.length, 0)
        assert.match(slice!.metadata.name ?? '', /^example-custom-endpoints-.+/)
        assert.deepEqual(slice!.metadata.labels, { team: 'a', 'kubernetes.io/service-name': 'example-custom-endpoints', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' })
        assert.deepEqual(slice!.metadata.annotations, { note: 'kept' })
        assert.deepEqual(slice!.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Endpoints', name: 'example-custom-endpoints', uid: made.metadata.uid, controller: true, blockOwnerDeletion: true }])
        assert.equal(slice!['addressType'], 'IPv4')
        assert.deepEqual(slice!['ports'], [{ name: '', port: 80, protocol: 'TCP' }])
        assert.deepEqual(slice!['endpoints'], [
          { addresses: ['10.1.2.3'], conditions: { ready: true }, nodeName: 'node-a' },
          { addresses: ['10.1.2.4'], conditions: { ready: false }, hostname: 'spare' },
        ])

        const current = await client.get(endpoints, 'default', 'example-custom-endpoints')
        await client.update(endpoints, 'default', { ...current, subsets: [{ ports: [{ port: 8080 }], addresses: [{ ip: '10.2.3.4' }] }] })
        const [updated] = await slicesUntil(client, 'example-custom-endpoints', 'the slice following the new address and port', (items) =>
          items.length === 1 && sameAs(items[0]!['endpoints'], [{ addresses: ['10.2.3.4'], conditions: { ready: true } }]) && sameAs(items[0]!['ports'], [{ name: '', port: 8080, protocol: 'TCP' }]),
        )
        // The slice of the old ports was reused rather than deleted and made anew.
        assert.equal(updated!.metadata.name, slice!.metadata.name)

        await client.delete(endpoints, 'default', 'example-custom-endpoints')
        await slicesUntil(client, 'example-custom-endpoints', 'the slice gone with the Endpoints', (items) => items.length === 0)
      }, modes ? { authorizationModes: modes } : {})
    })
  }

  it('mirrors IPv6 addresses into a slice of their own, written canonically', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', selectorless('dual'))
      await client.create(endpoints, 'default', {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'dual' },
        subsets: [{ ports: [{ name: 'web', port: 80 }], addresses: [{ ip: '10.0.0.1' }, { ip: '2001:DB8:0:0::1' }] }],
      })
      const items = await slicesUntil(client, 'dual', 'two slices', (found) => found.length === 2)
      const byType = Object.fromEntries(items.map((s) => [s['addressType'], s['endpoints']]))
      assert.deepEqual(byType, { IPv4: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], IPv6: [{ addresses: ['2001:db8::1'], conditions: { ready: true } }] })
    })
  })

  it('leaves out the loopback addresses Endpoints may hold here and no slice may, with a Warning event', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', selectorless('local'))
      await client.create(endpoints, 'default', {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'local' },
        subsets: [{ ports: [{ name: 'web', port: 80 }], addresses: [{ ip: '127.0.0.1' }, { ip: '10.0.0.9' }, { ip: '::1' }] }],
      })
      const items = await slicesUntil(client, 'local', 'the routable address mirrored', (found) => found.length === 1)
      assert.deepEqual(items[0]!['endpoints'], [{ addresses: ['10.0.0.9'], conditions: { ready: true } }])
      let warnings: KubeObject[] = []
      await eventually('the Warning event', async () => (warnings = (await client.list(eventsEntry, 'default')).items.filter((e) => e['reason'] === 'InvalidIPAddress')).length === 1)
      assert.equal(warnings[0]!['message'], 'Skipped 2 invalid IP addresses when mirroring to EndpointSlices')
    })
  })

  it('does not mirror the Endpoints of a Service with a selector, and drops the mirror when one is added', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'selected' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } })
      await client.create(endpoints, 'default', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'selected' }, subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 80 }] }] })
      await client.create(services, 'default', selectorless('later'))
      await client.create(endpoints, 'default', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'later' }, subsets: [{ addresses: [{ ip: '10.0.0.6' }], ports: [{ port: 80 }] }] })
      await slicesUntil(client, 'later', 'the selector-less Service mirrored', (items) => items.length === 1)
      assert.deepEqual(await mirrored(client, 'selected'), [])

      const later = await client.get(services, 'default', 'later')
      await client.update(services, 'default', { ...later, spec: { ...(later['spec'] as object), selector: { app: 'web' } } })
      await slicesUntil(client, 'later', 'the mirror gone once the Service selects pods', (items) => items.length === 0)
    })
  })

  it('honours the skip-mirror label, and mirrors once it is taken off', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', selectorless('skipped'))
      const made = await client.create(endpoints, 'default', {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'skipped', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
        subsets: [{ addresses: [{ ip: '10.0.0.7' }], ports: [{ port: 80 }] }],
      })
      await settled(client)
      assert.deepEqual(await mirrored(client, 'skipped'), [])

      await client.update(endpoints, 'default', { ...made, metadata: { ...made.metadata, labels: {} } })
      await slicesUntil(client, 'skipped', 'mirrored without the label', (items) => items.length === 1)
    })
  })

  it('mirrors at most 1000 addresses of a subset, ready ones first, and says so in a Warning event', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', selectorless('big'))
      const ip = (i: number): { ip: string } => ({ ip: `10.3.${Math.floor(i / 250)}.${(i % 250) + 1}` })
      await client.create(endpoints, 'default', {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'big' },
        subsets: [{ ports: [{ port: 80 }], addresses: Array.from({ length: 999 }, (_, i) => ip(i)), notReadyAddresses: [ip(999), ip(1000), ip(1001)] }],
      })
      const [slice] = await slicesUntil(client, 'big', 'a full slice', (items) => items.length === 1 && (items[0]!['endpoints'] as unknown[]).length === 1000)
      const notReady = (slice!['endpoints'] as { addresses: string[]; conditions: { ready: boolean } }[]).filter((e) => !e.conditions.ready)
      assert.deepEqual(notReady.map((e) => e.addresses[0]), ['10.3.3.250'])
      let warnings: KubeObject[] = []
      await eventually('the Warning event', async () => (warnings = (await client.list(eventsEntry, 'default')).items.filter((e) => e['reason'] === 'TooManyAddressesToMirror')).length === 1)
      assert.equal(warnings[0]!['message'], 'A max of 1000 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped')
      assert.equal((warnings[0]!['involvedObject'] as { kind: string }).kind, 'Endpoints')
    })
  })

  it('puts back a mirrored slice someone deletes', async () => {
    await withMirroring(async (client) => {
      await client.create(services, 'default', selectorless('kept'))
      await client.create(endpoints, 'default', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kept' }, subsets: [{ addresses: [{ ip: '10.0.0.8' }], ports: [{ port: 80 }] }] })
      const [first] = await slicesUntil(client, 'kept', 'mirrored', (items) => items.length === 1)
      await client.delete(endpointSlices, 'default', first!.metadata.name ?? '')
      await slicesUntil(client, 'kept', 'mirrored again', (items) => items.length === 1 && items[0]!.metadata.name !== first!.metadata.name)
    })
  })
})

function sameAs(actual: unknown, expected: unknown): boolean {
  try {
    assert.deepEqual(actual, expected)
    return true
  } catch {
    return false
  }
}
