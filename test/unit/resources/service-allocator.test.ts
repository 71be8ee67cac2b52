/** The ranges Services draw cluster IPs and node ports from, and what is taken from them. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rebuildAllocations, ServiceAllocator } from '../../../core/resources/core/service-allocation.js'
import { WatchCache } from '../../../core/storage/watch-cache.js'
import { ObservedStorage } from '../storage/observed-storage.js'
import { canonicalIP, IPRange, parseCIDR, PortRange } from '../../../core/resources/core/service-ranges.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const range = (cidr: string) => new IPRange(parseCIDR(cidr)!)

describe('addresses', () => {
  it('reads IPv4 and IPv6 and writes them canonically', () => {
    assert.equal(canonicalIP('10.0.0.1'), '10.0.0.1')
    assert.equal(canonicalIP('FD00:0:0:0:0:0:0:1'), 'fd00::1')
    assert.equal(canonicalIP('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1')
    assert.equal(canonicalIP('::ffff:10.0.0.1'), '::ffff:a00:1')
    assert.equal(canonicalIP('10.0.0.256'), undefined)
    assert.equal(canonicalIP('010.0.0.1'), undefined)
    assert.equal(canonicalIP('1::2::3'), undefined)
  })

  it('reads a CIDR down to its network address', () => {
    assert.equal(parseCIDR('10.96.3.7/16')?.text, '10.96.0.0/16')
    assert.equal(parseCIDR('fd00::1/108')?.text, 'fd00::/108')
    assert.equal(parseCIDR('10.0.0.0/33'), undefined)
  })
})

describe('a cluster IP range', () => {
  it('hands out neither the network nor the broadcast address', () => {
    const r = range('10.0.0.0/30')
    assert.equal(r.size, 2)
    assert.equal(r.first(), '10.0.0.1')
    assert.equal(r.allocate('10.0.0.0'), 'out-of-range')
    assert.equal(r.allocate('10.0.0.3'), 'out-of-range')
    const got = [r.allocateNext(), r.allocateNext()].sort()
    assert.deepEqual(got, ['10.0.0.1', '10.0.0.2'])
    assert.equal(r.allocateNext(), undefined)
  })

  it('refuses an address twice until it is released', () => {
    const r = range('10.0.0.0/24')
    assert.equal(r.allocate('10.0.0.5'), undefined)
    assert.equal(r.allocate('10.0.0.5'), 'allocated')
    r.release('10.0.0.5')
    assert.equal(r.allocate('10.0.0.5'), undefined)
  })

  it('picks addresses above the low band kept for requested ones while it can', () => {
    const r = range('10.0.0.0/24')
    for (let i = 0; i < 50; i++) {
      const last = Number(r.allocateNext()!.split('.')[3])
      assert.ok(last > 16, `picked 10.0.0.${last}`)
    }
  })
})

describe('node ports', () => {
  it('hands out every port of the range once', () => {
    const ports = new PortRange({ first: 30000, last: 30003 })
    const got = [1, 2, 3, 4].map(() => ports.allocateNext()).sort()
    assert.deepEqual(got, [30000, 30001, 30002, 30003])
    assert.equal(ports.allocateNext(), undefined)
    assert.equal(ports.allocate(29999), 'out-of-range')
  })
})

describe('the service allocator', () => {
  const svc = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 's' }, spec: { type: 'ClusterIP', ...spec } })

  it('undoes what it took when asked', () => {
    const a = new ServiceAllocator(['10.0.0.0/24'])
    const undo = a.allocate(svc({ clusterIP: '10.0.0.4', clusterIPs: ['10.0.0.4'] }))
    assert.equal(a.ipRanges[0]!.has('10.0.0.4'), true)
    undo()
    assert.equal(a.ipRanges[0]!.has('10.0.0.4'), false)
  })

  it('refuses a family the cluster does not serve', () => {
    const a = new ServiceAllocator(['10.0.0.0/24'])
    assert.throws(() => a.allocate(svc({ ipFamilies: ['IPv6'] })), {
      message: 'Service "s" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
    })
    assert.throws(() => a.allocate(svc({ ipFamilyPolicy: 'RequireDualStack' })), {
      message: 'Service "s" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    })
  })

  it('refuses a range that is no CIDR', () => {
    assert.throws(() => new ServiceAllocator(['10.0.0.0']), { message: 'invalid service cluster IP range "10.0.0.0"' })
  })
})

describe('the allocations rebuilt at start-up', () => {
  it('marks every stored service’s IP as taken, reading the store itself page by page rather than waiting on its cache', async () => {
    const backend = new ObservedStorage()
    const cache = new WatchCache(backend)
    cache.cacheResource('/registry/services/specs/')
    try {
      await cache.loaded()
      const ips: string[] = []
      for (let i = 0; i < 1203; i++) {
        const ip = `10.96.${Math.floor(i / 250) + 1}.${(i % 250) + 1}`
        ips.push(ip)
        await backend.create(`/registry/services/specs/default/s${i}`, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: `s${i}`, namespace: 'default' },
          spec: { type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, protocol: 'TCP' }] },
        })
      }
      const allocator = new ServiceAllocator(['10.96.0.0/16'])
      const listsBefore = backend.lists.length
      await rebuildAllocations({ storage: cache, prefix: (ns) => `/registry/services/specs/${ns ? `${ns}/` : ''}` }, allocator)
      const pages = backend.lists.slice(listsBefore)
      assert.equal(pages.length, 3, 'three pages of at most 500, read from the store')
      assert.ok(pages.every((p) => p.opts.limit === 500))
      for (const ip of ips) assert.equal(allocator.ipRanges[0]!.allocate(ip), 'allocated', ip)
    } finally {
      await cache.close()
    }
  })
})
