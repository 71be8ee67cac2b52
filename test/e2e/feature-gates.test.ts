/**
 * --feature-gates against the daemon binary: a gate it does not know, or a
 * locked gate set against its value, stops start-up with upstream's message
 * before anything is written or served.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { BIN, freePort } from './daemon.js'

/** Whether anything accepts a connection on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

describe('feature gates given to the daemon', () => {
  for (const [gates, message] of [
    ['NoSuchGate=true', 'unrecognized feature gate: NoSuchGate'],
    ['kube:APIServerIdentity=true,kube:NoSuchGate=false', 'unrecognized feature gate: NoSuchGate'],
    ['StructuredAuthorizationConfiguration=false', 'cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true'],
  ] as const) {
    it(`stops start-up on --feature-gates=${gates} with "${message}", exit code 1, nothing written or served`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'feature-gates-'))
      try {
        const port = await freePort()
        const r = spawnSync(
          process.execPath,
          [BIN, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, `--feature-gates=${gates}`],
          { encoding: 'utf8', timeout: 30_000 },
        )
        assert.equal(r.status, 1, r.stderr)
        assert.match(r.stderr, new RegExp(`^Error: ${message}$`, 'm'))
        assert.equal(existsSync(join(dir, 'pki')), false, 'no serving certificate was made')
        assert.equal(existsSync(join(dir, 'data')), false, 'no store was opened')
        assert.equal(await listening(port), false)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }
})
