/**
 * Service-account tokens against the daemon with its defaults (no flags):
 * `kubectl create token`, then kubectl with `--token`, and issuer discovery
 * over HTTPS verifying the token as a relying party would.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { request } from 'node:https'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { jwsHeader, jwsSignature, signerKey, startTestSigner, type TestSigner } from '../integration/external-jwt-signer-server.js'
import { BIN, Daemon, eventually, type KubectlResult } from './daemon.js'

const ISSUER = 'https://kubernetes.default.svc.cluster.local'

/** kubectl with only a bearer token: a kubeconfig that trusts the CA and holds no client certificate. */
function kubectlAs(d: Daemon, token: string, ...args: string[]): Promise<KubectlResult> {
  const kubeconfig = join(d.dir, 'token.kubeconfig')
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: https://127.0.0.1:${d.port}`,
      `    certificate-authority: ${join(d.certDir, 'ca.crt')}`,
      'contexts:',
      '- name: c',
      '  context: {cluster: c, user: u}',
      'current-context: c',
      'users:',
      '- name: u',
      `  user: {token: ${token}}`,
      '',
    ].join('\n'),
  )
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, HOME: d.dir, KUBECACHEDIR: join(d.dir, 'cache-token') }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    )
  })
}

/** GET over HTTPS with a bearer token: status, headers and body. */
function httpsGetFrom(d: Daemon, path: string, token: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: d.port, path, ca: readFileSync(join(d.certDir, 'ca.crt')), headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let body = ''
        res.on('data', (c) => (body += String(c)))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('service accounts against the daemon', () => {
  let d: Daemon
  before(async () => {
    d = await Daemon.start()
    await d.ok('create', 'serviceaccount', 'robot')
  })
  after(() => d.stop())

  const kubectlWithToken = (token: string, ...args: string[]) => kubectlAs(d, token, ...args)
  const httpsGet = (path: string, token: string) => httpsGetFrom(d, path, token)

  it('creates a token with kubectl create token and kubectl auth whoami shows the service account', async () => {
    const token = (await d.ok('create', 'token', 'robot', '--duration=20m')).trim()
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())
    assert.equal(claims.exp - claims.iat, 1200)
    const r = await kubectlWithToken(token, 'auth', 'whoami', '-o', 'json')
    assert.equal(r.code, 0, r.stderr)
    const user = JSON.parse(r.stdout).status.userInfo
    assert.equal(user.username, 'system:serviceaccount:default:robot')
    assert.deepEqual(user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'])
    assert.deepEqual(user.extra['authentication.kubernetes.io/credential-id'], [`JTI=${claims.jti}`])
  })

  it('binds a token to a pod with --bound-object-kind, and it stops working once the pod is deleted and the token cache forgot it', async () => {
    await d.ok('run', 'web', '--image=busybox', '--overrides={"spec":{"serviceAccountName":"robot"}}')
    const token = (await d.ok('create', 'token', 'robot', '--bound-object-kind=Pod', '--bound-object-name=web')).trim()
    const r = await kubectlWithToken(token, 'auth', 'whoami', '-o', 'json')
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout).status.userInfo.extra['authentication.kubernetes.io/pod-name'], ['web'])
    await d.ok('delete', 'pod', 'web', '--grace-period=0', '--wait=false')
    // The use above is kept by the token cache for ten seconds, as upstream's.
    await eventually(async () => {
      const refused = await kubectlWithToken(token, 'get', 'configmaps')
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /Unauthorized|must be logged in/)
    }, 15_000)
  })

  it('refuses a token for another audience, and refuses a too-short duration with the upstream message', async () => {
    const token = (await d.ok('create', 'token', 'robot', '--audience=vault')).trim()
    const r = await kubectlWithToken(token, 'get', 'configmaps')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Unauthorized|must be logged in/)
    const short = await d.kubectl('create', 'token', 'robot', '--duration=1m')
    assert.notEqual(short.code, 0)
    assert.match(short.stderr, /spec\.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes/)
  })

  it('serves issuer discovery over HTTPS, and its key set verifies the tokens', async () => {
    const token = (await d.ok('create', 'token', 'robot')).trim()
    const config = await httpsGet('/.well-known/openid-configuration', token)
    assert.equal(config.status, 200)
    assert.equal(config.headers['content-type'], 'application/json')
    assert.equal(config.headers['cache-control'], 'public, max-age=3600')
    const doc = JSON.parse(config.body)
    assert.equal(doc.issuer, ISSUER)
    assert.equal(doc.jwks_uri, `https://127.0.0.1:${d.port}/openid/v1/jwks`)
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256'])
    const jwks = await httpsGet('/openid/v1/jwks', token)
    assert.equal(jwks.status, 200)
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json')
    const { payload } = await jwtVerify(token, createLocalJWKSet(JSON.parse(jwks.body)), { issuer: ISSUER, audience: ISSUER })
    assert.equal(payload.sub, 'system:serviceaccount:default:robot')
  })
})

describe('service-account and bootstrap token flags of the daemon', () => {
  it('signs with --service-account-signing-key-file (PKCS#1 RSA) for --service-account-issuer, and accepts bootstrap tokens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-keys-'))
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const keyFile = join(dir, 'sa.key')
    writeFileSync(keyFile, pair.privateKey.export({ type: 'pkcs1', format: 'pem' }))
    const d = await Daemon.start([
      `--service-account-signing-key-file=${keyFile}`,
      `--service-account-key-file=${keyFile}`,
      '--service-account-issuer=https://issuer.example',
      '--enable-bootstrap-token-auth',
    ])
    try {
      const token = (await d.ok('create', 'token', 'default')).trim()
      const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString())
      assert.equal(header.alg, 'RS256')
      assert.equal(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).iss, 'https://issuer.example')
      assert.equal(JSON.parse((await kubectlAs(d, token, 'auth', 'whoami', '-o', 'json')).stdout).status.userInfo.username, 'system:serviceaccount:default:default')
      await d.ok('create', 'secret', 'generic', 'bootstrap-token-abcdef', '-n', 'kube-system', '--type=bootstrap.kubernetes.io/token',
        '--from-literal=token-id=abcdef', '--from-literal=token-secret=0123456789abcdef', '--from-literal=usage-bootstrap-authentication=true')
      const who = await kubectlAs(d, 'abcdef.0123456789abcdef', 'auth', 'whoami', '-o', 'json')
      assert.equal(who.code, 0, who.stderr)
      assert.equal(JSON.parse(who.stdout).status.userInfo.username, 'system:bootstrap:abcdef')
    } finally {
      await d.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('stops at start-up with an Error line for a key file that holds no key, and for an external signer beside key files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-keys-'))
    try {
      const bad = join(dir, 'bad.pem')
      writeFileSync(bad, 'not a key')
      const run = (...flags: string[]) =>
        spawnSync(process.execPath, [BIN, '--secure-port=0', '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, ...flags], { encoding: 'utf8', timeout: 20_000 })
      const r = run(`--service-account-signing-key-file=${bad}`, `--service-account-key-file=${bad}`, '--service-account-issuer=https://a')
      assert.equal(r.status, 1, r.stderr)
      assert.match(r.stderr, /^Error: --service-account-key-file .*bad\.pem: data does not contain any valid RSA or ECDSA public keys$/m)
      const signer = run('--service-account-signing-endpoint=/run/signer.sock', `--service-account-key-file=${bad}`, '--service-account-issuer=https://a', '--feature-gates=ExternalServiceAccountTokenSigner=true')
      assert.equal(signer.status, 1)
      assert.match(signer.stderr, /^Error: can't set `--service-account-signing-key-file` and\/or `--service-account-key-file` with `--service-account-signing-endpoint` \(They are mutually exclusive\)$/m)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the daemon with an external signer (--service-account-signing-endpoint)', () => {
  let signer: TestSigner
  let d: Daemon
  before(async () => {
    signer = await startTestSigner({ maxTokenExpirationSeconds: 4 * 3600 })
    d = await Daemon.start([
      `--service-account-signing-endpoint=${signer.socketPath}`,
      `--service-account-issuer=${ISSUER}`,
      '--feature-gates=ExternalServiceAccountTokenSigner=true',
    ])
    await d.ok('create', 'serviceaccount', 'robot')
  })
  after(async () => {
    await d.stop()
    await signer.close()
  })

  it("kubectl create token gets a token the signer signed, capped at the signer's lifetime, and kubectl auth whoami accepts it", async () => {
    const r = await d.kubectl('create', 'token', 'robot', '--duration=8h')
    assert.equal(r.code, 0, r.stderr)
    const token = r.stdout.trim()
    assert.deepEqual(JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()), { alg: 'ES256', kid: 'key-1', typ: 'JWT' })
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())
    assert.equal(claims.exp - claims.iat, 4 * 3600)
    const who = await kubectlAs(d, token, 'auth', 'whoami', '-o', 'json')
    assert.equal(who.code, 0, who.stderr)
    assert.equal(JSON.parse(who.stdout).status.userInfo.username, 'system:serviceaccount:default:robot')
  })

  it('refuses with 401 the same claims signed by a key the signer does not publish, and stores nothing', async () => {
    const token = (await d.ok('create', 'token', 'robot')).trim()
    const [, payload] = token.split('.')
    const rogue = signerKey('rogue')
    const header = jwsHeader({ alg: 'ES256', kid: 'key-1', typ: 'JWT' })
    const forged = `${header}.${payload}.${jwsSignature(rogue, `${header}.${payload}`)}`
    assert.equal((await httpsGetFrom(d, '/api/v1/namespaces/default/configmaps', forged)).status, 401)
    const create = await kubectlAs(d, forged, 'create', 'configmap', 'forged')
    assert.notEqual(create.code, 0)
    assert.match(create.stderr, /Unauthorized|must be logged in/)
    assert.notEqual((await d.kubectl('get', 'configmap', 'forged')).code, 0)
  })

  it('publishes the keys the signer returned at /openid/v1/jwks', async () => {
    const admin = (await d.ok('create', 'token', 'robot')).trim()
    const r = await httpsGetFrom(d, '/openid/v1/jwks', admin)
    assert.equal(r.status, 200, r.body)
    assert.deepEqual(
      JSON.parse(r.body).keys.map((k: Record<string, string>) => k.kid),
      ['key-1'],
    )
  })
})
