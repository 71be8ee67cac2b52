/**
 * The --nodeagent-* files are read at start-up: a file that cannot be read,
 * a CA file with no certificate, or a client certificate without its key
 * stops the daemon with a message naming the flag, before it serves.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { nodeAgentOptions } from '../../../runtimes/node/daemon/node-agent.js'
import { runToExit } from './run-to-exit.js'

describe('--nodeagent-* files at start-up', () => {
  it('refuses to start on a missing file, a CA with no certificate, or half a client pair', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'apiserver-nodeagent-'))
    try {
      // A port of its own: the files are read once the daemon listens, and 6443 may be taken (a server from `npm start`).
      const base = ['--secure-port=0', '--bind-address=127.0.0.1', '--cert-dir', join(dir, 'pki'), '--data-dir', join(dir, 'data')]
      await writeFile(join(dir, 'empty.crt'), 'not a certificate\n')
      const cases: [string[], RegExp][] = [
        [[`--kubelet-certificate-authority=${join(dir, 'missing.crt')}`], /--nodeagent-certificate-authority: cannot read .*missing\.crt/],
        [[`--nodeagent-certificate-authority=${join(dir, 'empty.crt')}`], /--nodeagent-certificate-authority: .*empty\.crt holds no PEM certificate/],
        [[`--nodeagent-client-certificate=${join(dir, 'empty.crt')}`], /--nodeagent-client-certificate and --nodeagent-client-key must be given together/],
      ]
      for (const [flags, message] of cases) {
        const exit = await runToExit([...base, ...flags])
        assert.equal(exit.listening, false, `started with ${flags.join(' ')}`)
        assert.equal(exit.code, 1)
        assert.match(exit.stderr, message)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('hands --max-connection-bytes-per-sec to pods/log, and nothing for 0', async () => {
    const base = { certificateAuthority: '', clientCertificate: '', clientKey: '', preferredAddressTypes: ['InternalIP'], timeoutMs: 1000 }
    assert.equal((await nodeAgentOptions({ ...base, maxBytesPerSec: 4096 })).maxBytesPerSec, 4096)
    assert.equal((await nodeAgentOptions({ ...base, maxBytesPerSec: 0 })).maxBytesPerSec, undefined)
  })
})
