/**
 * `--permit-port-sharing`: two daemons on the same address and port, as in a
 * rolling restart where the new server binds before the old one leaves. Each
 * has its own embedded store and its own serving certificate from one CA, so
 * the admin client certificate works on both and the certificate a fresh
 * connection meets tells which daemon answered. The kernel spreads new
 * connections over both; once one stops, the other answers them all; a third
 * daemon without the flag cannot bind the port.
 *
 * Bun and Deno bind with SO_REUSEPORT on Linux. Node does from 22.12 on; an
 * older Node refuses the flag at start-up, which is tested instead.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { TLSSocket } from 'node:tls'
import { reusePortWorks } from '../../runtimes/node/adapter/reuse-port.js'
import { BIN, BUN_DAEMON, Daemon, DENO_DAEMON, freePort } from './daemon.js'

/** Most fresh connections opened before concluding that one daemon never gets any. */
const MAX_CONNECTIONS = 100

interface Answer {
  status: number
  /** SHA-256 fingerprint of the serving certificate the connection met. */
  server: string
}

/** GET /version on a new connection (no agent, no keep-alive) with the admin client certificate. */
function getVersion(port: number, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/version', agent: false, timeout: 15_000, ...tls }, (res) => {
      const server = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, server }))
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')))
    req.on('error', reject)
    req.end()
  })
}

function servingFingerprint(daemon: Daemon): string {
  return new X509Certificate(readFileSync(join(daemon.certDir, 'apiserver.crt'))).fingerprint256
}

/** Runs the daemon expecting it to exit by itself; killed (and so failing the test) if it is still up after 60 s. */
function runToExit(command: readonly string[], args: string[]): Promise<{ code: number; stderr: string }> {
  const [program, ...programArgs] = command
  return new Promise((resolve) => {
    execFile(program!, [...programArgs, ...args], { timeout: 60_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
      resolve({ code, stderr: String(stderr) })
    })
  })
}

function portSharing(runtime: string, command: readonly string[] | undefined, skip: string | false): void {
  describe(`two ${runtime} daemons on one port`, { skip }, () => {
    let port = 0
    let first: Daemon | undefined
    let second: Daemon | undefined
    let secondDir = ''
    const thirdDir = mkdtempSync(join(tmpdir(), 'apiserver-port-sharing-'))
    let tls: { ca: Buffer; cert: Buffer; key: Buffer }

    before(async () => {
      port = await freePort()
      first = await Daemon.start(['--permit-port-sharing'], { port, ...(command ? { command } : {}) })
      // The second daemon signs its own serving certificate with the first one's CA.
      secondDir = mkdtempSync(join(tmpdir(), 'apiserver-port-sharing-'))
      mkdirSync(join(secondDir, 'pki'), { mode: 0o700 })
      for (const file of ['ca.crt', 'ca.key']) copyFileSync(join(first.certDir, file), join(secondDir, 'pki', file))
      second = await Daemon.start(['--permit-port-sharing'], { port, dir: secondDir, ...(command ? { command } : {}) })
      tls = {
        ca: readFileSync(join(first.certDir, 'ca.crt')),
        cert: readFileSync(join(first.certDir, 'admin.crt')),
        key: readFileSync(join(first.certDir, 'admin.key')),
      }
    })
    after(async () => {
      await first?.stop()
      await second?.stop()
      rmSync(secondDir, { recursive: true, force: true })
      rmSync(thirdDir, { recursive: true, force: true })
    })

    it('spreads fresh connections over both daemons, each answering', async () => {
      const servers = new Map([
        [servingFingerprint(first!), 'first'],
        [servingFingerprint(second!), 'second'],
      ])
      assert.equal(servers.size, 2, 'the two daemons serve different certificates')
      const answeredBy = new Set<string>()
      for (let i = 0; i < MAX_CONNECTIONS && answeredBy.size < 2; i++) {
        const answer = await getVersion(port, tls)
        assert.equal(answer.status, 200)
        const who = servers.get(answer.server)
        assert.ok(who, `a connection met a certificate of neither daemon: ${answer.server}`)
        answeredBy.add(who)
      }
      assert.deepEqual([...answeredBy].sort(), ['first', 'second'])
    })

    it('refuses a third daemon without the flag: the port is in use', async () => {
      const flags = [`--secure-port=${port}`, '--bind-address=127.0.0.1', `--cert-dir=${join(thirdDir, 'pki')}`, `--data-dir=${join(thirdDir, 'data')}`]
      const run = await runToExit(command ?? [process.execPath, BIN], flags)
      assert.equal(run.code, 1, run.stderr)
      assert.match(run.stderr, new RegExp(`Error: cannot listen on https://127\\.0\\.0\\.1:${port}: .*address already in use`))
    })

    it('keeps serving every connection from the second daemon once the first has stopped', async () => {
      assert.equal(await first!.terminate(), 0)
      const remaining = servingFingerprint(second!)
      for (let i = 0; i < 10; i++) assert.deepEqual(await getVersion(port, tls), { status: 200, server: remaining })
    })
  })
}

const nodeShares = await reusePortWorks()

// One runtime after the other: daemons starting side by side on two cores only slow each other down.
describe('--permit-port-sharing', () => {
  portSharing('Bun', BUN_DAEMON, false)
  portSharing('Deno', DENO_DAEMON, false)
  portSharing('Node', undefined, nodeShares ? false : `Node ${process.versions.node} cannot bind with SO_REUSEPORT (22.12 or later can)`)

  const refusalSkip = nodeShares && `Node ${process.versions.node} binds with SO_REUSEPORT`
  it('the Node daemon refuses --permit-port-sharing where Node cannot bind with SO_REUSEPORT, and writes nothing', { skip: refusalSkip }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-port-sharing-'))
    try {
      const flags = ['--permit-port-sharing', '--secure-port=0', '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`]
      const run = await runToExit([process.execPath, BIN], flags)
      assert.equal(run.code, 1, run.stderr)
      assert.match(run.stderr, /Error: --permit-port-sharing: node \S+ cannot bind with SO_REUSEPORT on this platform .*; refusing to start/)
      assert.deepEqual(readdirSync(dir), [], 'no certificate or store was made')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
