/** The peer proxy's settings in the daemon: off without its gate, refused without the proxy client certificate, the advertised peer address. */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { readCommandLine } from '../../../core/options/flags/index.js'
import { peerProxyOptions } from '../../../runtimes/node/daemon/multi-server.js'

function values(argv: string[]) {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return assert.fail()
  return command.flags.values
}

const GATE = '--feature-gates=UnknownVersionInteroperabilityProxy=true'
const PAIR = { certificate: 'CERT', key: 'KEY' }

describe('peer proxy options in the daemon', () => {
  it('is off without its feature gate', async () => {
    assert.equal(await peerProxyOptions(values([]), PAIR), undefined)
  })

  it('refuses to start without the proxy client certificate it presents to peers', async () => {
    await assert.rejects(peerProxyOptions(values([GATE]), undefined), /needs --proxy-client-cert-file and --proxy-client-key-file/)
  })

  it('names an unreadable --peer-ca-file', async () => {
    await assert.rejects(peerProxyOptions(values([GATE, '--peer-ca-file=/nonexistent/peer-ca.crt']), PAIR), /--peer-ca-file: cannot read \/nonexistent\/peer-ca.crt/)
  })

  it('reads the peer CA and the advertised peer address (both or neither)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'peer-ca-'))
    try {
      writeFileSync(join(dir, 'ca.crt'), 'PEM')
      const both = await peerProxyOptions(values([GATE, `--peer-ca-file=${join(dir, 'ca.crt')}`, '--peer-advertise-ip=fd00::1', '--peer-advertise-port=7443']), PAIR)
      assert.deepEqual(both, { clientCertificate: PAIR, caBundle: 'PEM', address: '[fd00::1]:7443' })
      const ipOnly = await peerProxyOptions(values([GATE, '--peer-advertise-ip=10.0.0.1']), PAIR)
      assert.deepEqual(ipOnly, { clientCertificate: PAIR })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
