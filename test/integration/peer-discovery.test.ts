/**
 * Peer discovery follows the peer endpoint records: a server that writes
 * its record is known at once (the records' renewal interval here is a
 * minute, so nothing polled could find it in time), one that removes it is
 * forgotten at once, one whose record expires is dropped when it does, and
 * one that could not be read yet is read again shortly. The peer is a real
 * server in process, whose aggregated discovery is what is read.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import { peerEndpoints } from '../../core/peers/peer-endpoints.js'
import { followPeers } from '../../core/peers/peers.js'
import type { PeerForward } from '../../core/peers/peer-transport.js'
import { silentLogger } from '../../core/logging/logger.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, eventually } from './harness.js'

const ROOT = '/registry'
const SLOW = { ttlMs: 60_000, intervalMs: 60_000 }
const now = () => new Date()

describe('peer discovery following the peer endpoint records', () => {
  const storage = new MemoryStorage()
  const peer = createTestServer()
  /** The peers a connection can be made to, by host:port. */
  const reachable = new Map<string, ApiServer>()
  let attempts = 0
  const forward: PeerForward = async (hostPort, request) => {
    attempts++
    const server = reachable.get(hostPort)
    if (!server) throw new Error(`connect ECONNREFUSED ${hostPort}`)
    return server.fetch(new Request(`http://in-process${request.path}`, { method: request.method, headers: request.headers }))
  }
  const self = followPeers({ storage, root: ROOT, now, logger: silentLogger }, 'apiserver-self', forward, { firstDelayMs: 20, maxDelayMs: 200, attempts: 100 })
  after(async () => {
    self.stop()
    await peer.shutdown()
  })
  const jobsAt = () => self.directory.serving('batch', 'v1', 'jobs')

  it('knows a peer as soon as its record is written, and never itself', async () => {
    await peer.ready
    reachable.set('10.0.0.1:6443', peer)
    reachable.set('10.0.0.9:6443', peer)
    await peerEndpoints(storage, ROOT, 'apiserver-self', '10.0.0.9:6443', SLOW, now).renew()
    const a = peerEndpoints(storage, ROOT, 'apiserver-a', '10.0.0.1:6443', SLOW, now)
    await a.renew()
    await eventually('the peer serves batch/v1 jobs', async () => jobsAt().length > 0)
    assert.deepEqual(jobsAt(), ['10.0.0.1:6443'])
    assert.deepEqual(self.directory.serving('', 'v1', 'configmaps'), ['10.0.0.1:6443'])
    assert.deepEqual(self.directory.serving('example.com', 'v1', 'widgets'), [])
  })

  it('forgets a peer as soon as it removes its record', async () => {
    await peerEndpoints(storage, ROOT, 'apiserver-a', '10.0.0.1:6443', SLOW, now).remove()
    await eventually('the peer is forgotten', async () => jobsAt().length === 0)
  })

  it('drops a peer when its record expires unrenewed, and removes the record', async () => {
    reachable.set('10.0.0.2:6443', peer)
    await peerEndpoints(storage, ROOT, 'apiserver-b', '10.0.0.2:6443', { ttlMs: 3000, intervalMs: 60_000 }, now).renew()
    await eventually('the peer is known', async () => jobsAt().length > 0)
    await eventually('the peer is dropped', async () => jobsAt().length === 0)
    await eventually('its record is removed', async () => (await storage.get(`${ROOT}/peerserverleases/apiserver-b`)) === undefined)
  })

  it('reads again, shortly, a peer that could not be reached when its record appeared', async () => {
    const before = attempts
    await peerEndpoints(storage, ROOT, 'apiserver-c', '10.0.0.3:6443', SLOW, now).renew()
    await eventually('a read failed', async () => attempts > before)
    assert.deepEqual(jobsAt(), [])
    reachable.set('10.0.0.3:6443', peer)
    await eventually('the peer is read once reachable', async () => jobsAt().length > 0)
    assert.deepEqual(jobsAt(), ['10.0.0.3:6443'])
  })
})
