/**
 * The daemon running the root-ca-cert-publisher controller: a new
 * namespace gets `kube-root-ca.crt`, whose `ca.crt` verifies the daemon's
 * serving certificate, as a pod's projected service account volume uses it.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start(['--controllers=root-ca-cert-publisher'])
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

/** Completes a TLS handshake with the daemon trusting `ca` alone; fails when the bundle does not verify its certificate. */
function handshake(ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: d.port, ca }, () => {
      socket.end()
      resolve()
    })
    socket.once('error', reject)
  })
}

describe('root-ca-cert-publisher in the daemon', () => {
  it("publishes in a new namespace the CA that verifies the daemon's serving certificate", async () => {
    await d.ok('create', 'namespace', 'fresh')
    let ca = ''
    await eventually(async () => {
      ca = await d.ok('get', 'configmap', 'kube-root-ca.crt', '-n', 'fresh', '-o', 'jsonpath={.data.ca\\.crt}')
      assert.match(ca, /-----BEGIN CERTIFICATE-----/)
    })
    await handshake(ca)
    // A certificate that did not sign the serving one does not: the handshake proves the bundle.
    await assert.rejects(handshake(readFileSync(join(d.certDir, 'admin.crt'), 'utf8')), /unable to verify|self.signed|certificate/)
  })
})
