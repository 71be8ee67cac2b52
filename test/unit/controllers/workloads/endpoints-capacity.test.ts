/**
 * Endpoints past 1000 addresses are cut as upstream's truncateEndpoints
 * cuts them: ready addresses before not-ready ones, the room shared among
 * subsets by their share, rounded up.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { truncateToCapacity } from '../../../../core/controllers/workloads/endpoints.js'

const addresses = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ ip: `${prefix}.${Math.floor(i / 256)}.${i % 256}` }))
const sizes = (subsets: Record<string, unknown>[]) =>
  subsets.map((s) => [((s['addresses'] as unknown[]) ?? []).length, ((s['notReadyAddresses'] as unknown[]) ?? []).length])

describe('truncateToCapacity', () => {
  it('leaves 1000 addresses or fewer as they are', () => {
    const subsets = [{ addresses: addresses(600, '10.0'), notReadyAddresses: addresses(400, '10.1') }]
    assert.equal(truncateToCapacity(subsets), false)
    assert.deepEqual(sizes(subsets), [[600, 400]])
  })

  it('cuts the not-ready addresses first, keeping every ready one', () => {
    const subsets = [{ addresses: addresses(600, '10.0'), notReadyAddresses: addresses(600, '10.1'), ports: [{ port: 80 }] }]
    assert.equal(truncateToCapacity(subsets), true)
    assert.deepEqual(sizes(subsets), [[600, 400]])
    assert.deepEqual(subsets[0]!.ports, [{ port: 80 }])
  })

  it('past 1000 ready ones, shares the room among subsets by their share, rounded up, and drops every not-ready one', () => {
    const subsets: Record<string, unknown>[] = [
      { addresses: addresses(901, '10.0'), notReadyAddresses: addresses(5, '10.1') },
      { addresses: addresses(300, '10.2') },
      { notReadyAddresses: addresses(7, '10.3') },
    ]
    assert.equal(truncateToCapacity(subsets), true)
    // ceil(901/1201*1000) = 751, then what is left (249) of ceil(300/1201*1000) = 250.
    assert.deepEqual(sizes(subsets), [[751, 0], [249, 0], [0, 0]])
    assert.equal('notReadyAddresses' in subsets[0]!, false)
  })
})
