/**
 * Early timestamps through the daemon's own store (protobuf on disk) with
 * real kubectl, as upstream's Lease conformance spec writes them: Go's zero
 * time plus seconds comes back as written, in JSON and YAML, and so does a
 * patched one of year 0099.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

const LEASE = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: early
  namespace: default
spec:
  holderIdentity: holder
  leaseDurationSeconds: 30
  acquireTime: "0001-01-01T00:00:02.000000Z"
  renewTime: "0001-01-01T00:00:05.000000Z"
  leaseTransitions: 0
`

describe('early timestamps in the daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-lease-'))
  let daemon: Daemon

  before(async () => {
    daemon = await Daemon.start()
  })
  after(async () => {
    await daemon?.stop()
  })

  it('reads back a Lease of year 0001 as kubectl wrote it, and a patched renewTime of year 0099', async () => {
    writeFileSync(join(dir, 'lease.yaml'), LEASE)
    await daemon.ok('create', '-f', join(dir, 'lease.yaml'))
    const read = async () => JSON.parse(await daemon.ok('get', 'lease', 'early', '-o', 'json')) as { spec: Record<string, unknown> }
    const expected = { holderIdentity: 'holder', leaseDurationSeconds: 30, acquireTime: '0001-01-01T00:00:02.000000Z', renewTime: '0001-01-01T00:00:05.000000Z', leaseTransitions: 0 }
    assert.deepEqual((await read()).spec, expected)
    assert.match(await daemon.ok('get', 'lease', 'early', '-o', 'yaml'), /renewTime: "0001-01-01T00:00:05\.000000Z"/)
    await daemon.ok('patch', 'lease', 'early', '--type=merge', '-p', '{"spec":{"renewTime":"0099-12-31T23:59:59.999999Z"}}')
    assert.equal((await read()).spec['renewTime'], '0099-12-31T23:59:59.999999Z')
  })
})
