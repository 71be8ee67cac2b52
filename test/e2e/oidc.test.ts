/**
 * OIDC against the built daemon with kubectl `--token`: an HTTPS issuer
 * started by the test on 127.0.0.1, configured by `--authentication-config`
 * (re-read when the file changes) or by the `--oidc-*` flags.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { OidcIssuer } from '../fixtures/oidc-issuer.js'
import { Daemon, eventually, type KubectlResult } from './daemon.js'

/** kubectl as a user holding only a token: no client certificate, the daemon's CA trusted. */
function kubectlWithToken(d: Daemon, token: string, ...args: string[]): Promise<KubectlResult> {
  const empty = join(d.dir, 'empty.kubeconfig')
  writeFileSync(empty, 'apiVersion: v1\nkind: Config\n')
  const flags = ['--kubeconfig', empty, '--server', `https://127.0.0.1:${d.port}`, '--certificate-authority', join(d.certDir, 'ca.crt'), '--token', token]
  return new Promise((resolve) => {
    execFile('kubectl', [...flags, ...args], { env: { ...process.env, HOME: d.dir, KUBECACHEDIR: join(d.dir, 'cache') }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

async function whoami(d: Daemon, token: string): Promise<{ username: string; groups: string[] }> {
  const r = await kubectlWithToken(d, token, 'auth', 'whoami', '-o', 'json')
  assert.equal(r.code, 0, r.stderr)
  return (JSON.parse(r.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo
}

function authenticationConfig(issuer: OidcIssuer, prefix: string): string {
  return JSON.stringify({
    apiVersion: 'apiserver.config.k8s.io/v1beta1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: issuer.url, certificateAuthority: issuer.caPem, audiences: ['kubernetes'] },
        claimMappings: { username: { claim: 'sub', prefix }, groups: { expression: 'claims.?groups.orValue([])' } },
      },
    ],
  })
}

describe('kubectl --token with OIDC against the daemon', () => {
  let issuer: OidcIssuer
  let dir: string

  before(async () => {
    issuer = await OidcIssuer.start()
    dir = mkdtempSync(join(tmpdir(), 'oidc-e2e-'))
  })

  after(async () => {
    await issuer.down()
    rmSync(dir, { recursive: true, force: true })
  })

  it('authenticates by --authentication-config, refuses a bad token, and follows changes of the file', async () => {
    const file = join(dir, 'authentication.json')
    writeFileSync(file, authenticationConfig(issuer, 'oidc:'))
    const d = await Daemon.start([`--authentication-config=${file}`])
    try {
      const token = await issuer.token({ groups: ['dev'] })
      assert.deepEqual(await whoami(d, token), { username: 'oidc:alice', groups: ['dev', 'system:authenticated'] })

      const expired = await issuer.token({ exp: Math.floor(Date.now() / 1000) - 60 })
      const refused = await kubectlWithToken(d, expired, 'get', 'configmaps')
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /Unauthorized|must be logged in/)

      writeFileSync(file, authenticationConfig(issuer, 'next:'))
      await eventually(async () => assert.equal((await whoami(d, await issuer.token({ sub: 'bob' }))).username, 'next:bob'), 15_000)

      // The anonymous section is read at start-up only (as upstream): a change is warned of, not reported as in effect.
      const withAnonymous = { ...JSON.parse(authenticationConfig(issuer, 'next:')), anonymous: { enabled: true, conditions: [{ path: '/livez' }] } }
      writeFileSync(file, JSON.stringify(withAnonymous))
      await eventually(() => assert.match(d.logs.join(''), /the anonymous section of --authentication-config changed: it takes effect at the next start/), 15_000)

      // An invalid file is logged and ignored: the configuration in effect stays.
      writeFileSync(file, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'AuthenticationConfiguration', jwt: [{ issuer: { url: 'http://plain' } }] }))
      await eventually(() => assert.match(d.logs.join(''), /reloading --authentication-config failed/), 15_000)
      assert.equal((await whoami(d, await issuer.token({ sub: 'carol' }))).username, 'next:carol')
    } finally {
      await d.stop()
    }
  })

  it('authenticates by the --oidc-* flags, trusting --oidc-ca-file, with the legacy email rule', async () => {
    const caFile = join(dir, 'issuer-ca.crt')
    writeFileSync(caFile, issuer.caPem)
    const d = await Daemon.start([
      `--oidc-issuer-url=${issuer.url}`,
      '--oidc-client-id=kubernetes',
      `--oidc-ca-file=${caFile}`,
      '--oidc-username-claim=email',
      '--oidc-groups-claim=groups',
      '--oidc-groups-prefix=oidc:',
    ])
    try {
      const token = await issuer.token({ email: 'dana@example.com', email_verified: true, groups: ['ops'] })
      assert.deepEqual(await whoami(d, token), { username: 'dana@example.com', groups: ['oidc:ops', 'system:authenticated'] })
      const unverified = await issuer.token({ email: 'eve@example.com', email_verified: false })
      const r = await kubectlWithToken(d, unverified, 'auth', 'whoami')
      assert.notEqual(r.code, 0)
    } finally {
      await d.stop()
    }
  })
})
