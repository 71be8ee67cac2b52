/** The peer endpoint records: each server's host:port while it renews, gone (and deleted) once expired or removed. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { joinHostPort, peerEndpoints } from '../../../core/peers/peer-endpoints.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const TIMINGS = { ttlMs: 15_000, intervalMs: 10_000 }

describe('peer endpoint records', () => {
  it('lists the live servers by id, and forgets one that stopped renewing or left', async () => {
    const storage = new MemoryStorage()
    let t = 1_000_000
    const now = () => new Date(t)
    const a = peerEndpoints(storage, '/registry', 'apiserver-a', '10.0.0.1:6443', TIMINGS, now)
    const b = peerEndpoints(storage, '/registry', 'apiserver-b', joinHostPort('fd00::2', 7443), TIMINGS, now)
    const c = peerEndpoints(storage, '/registry', 'apiserver-c', '10.0.0.3:6443', TIMINGS, now)
    await Promise.all([a.renew(), b.renew(), c.renew()])
    assert.deepEqual(Object.fromEntries(await a.live()), { 'apiserver-a': '10.0.0.1:6443', 'apiserver-b': '[fd00::2]:7443', 'apiserver-c': '10.0.0.3:6443' })
    await c.remove()
    t += 10_000
    await a.renew()
    t += 10_000
    // b's record is 20s old: expired, and deleted from the store.
    assert.deepEqual([...(await a.live()).keys()], ['apiserver-a'])
    assert.equal((await storage.list('/registry/peerserverleases/')).items.length, 1)
  })

  it('refuses an address that is not host:port', () => {
    assert.throws(() => peerEndpoints(new MemoryStorage(), '/registry', 'x', '10.0.0.1', TIMINGS, () => new Date()), /not host:port/)
  })
})
