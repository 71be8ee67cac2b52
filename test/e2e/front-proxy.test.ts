/**
 * The authenticating proxy and impersonation against the built daemon over
 * TLS: a real front-proxy client certificate sends identity headers with
 * node's https client, kubectl impersonates with --as and --as-group. Under
 * AlwaysDeny only system:masters may act, so every refusal below would be a
 * success if a header were trusted where it must not be.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type CertificateAuthority, type CertificateKeyPair, createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { Daemon } from './daemon.js'

interface Reply {
  status: number
  body: { message?: string; reason?: string; status?: { userInfo?: unknown } }
}

const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
const configMap = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })
const asAdmin = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' }

describe('front proxy and impersonation through the daemon', () => {
  let daemon: Daemon
  let dir: string
  let proxyCaFile: string
  let proxyCa: CertificateAuthority
  let proxy: CertificateKeyPair
  let otherCaProxy: CertificateKeyPair
  let wrongName: CertificateKeyPair

  /** One HTTPS request on a new connection, trusting the daemon's CA, with the given client certificate. */
  const call = (method: string, path: string, client: CertificateKeyPair | undefined, headers: Record<string, string>, body?: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: daemon.port,
          path,
          method,
          ca: readFileSync(join(daemon.certDir, 'ca.crt'), 'utf8'),
          ...(client ? { cert: client.certificate, key: client.privateKey } : {}),
          headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          agent: false,
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => (text += c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Reply['body'] }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })

  const assertNotStored = async (name: string): Promise<void> => {
    const r = await daemon.kubectl('get', 'configmap', name, '-n', 'default')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /NotFound/)
  }

  before(async () => {
    proxyCa = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const otherCa = await createCertificateAuthority({ commonName: 'other-ca' })
    proxy = await issueClientCertificate(proxyCa, { commonName: 'front-proxy-client', organizations: [] })
    otherCaProxy = await issueClientCertificate(otherCa, { commonName: 'front-proxy-client', organizations: [] })
    wrongName = await issueClientCertificate(proxyCa, { commonName: 'mallory', organizations: [] })
    dir = mkdtempSync(join(tmpdir(), 'front-proxy-'))
    proxyCaFile = join(dir, 'front-proxy-ca.crt')
    writeFileSync(proxyCaFile, proxyCa.certificate)
    const tokenFile = join(dir, 'tokens.csv')
    writeFileSync(tokenFile, 'alice-token,alice,1001,dev\n')
    daemon = await Daemon.start([
      '--authorization-mode=AlwaysDeny',
      `--token-auth-file=${tokenFile}`,
      `--requestheader-client-ca-file=${proxyCaFile}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-allowed-names=front-proxy-client',
    ])
  })
  after(async () => {
    await daemon?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('runs a request as the user a trusted proxy names, with its groups and extras', async () => {
    const r = await call('POST', whoami, proxy, { ...asAdmin, 'X-Remote-Extra-Scopes': 'view' }, review)
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.deepEqual(r.body.status?.userInfo, { username: 'admin', groups: ['system:masters', 'system:authenticated'], extra: { scopes: ['view'] } })
  })

  it('refuses with 401 the headers of a certificate another CA signed, storing nothing', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/configmaps', otherCaProxy, asAdmin, configMap('other-ca'))
    assert.equal(r.status, 401)
    await assertNotStored('other-ca')
  })

  it('refuses with 401 a front-proxy certificate whose name is not allowed, storing nothing', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/configmaps', wrongName, asAdmin, configMap('wrong-name'))
    assert.equal(r.status, 401)
    await assertNotStored('wrong-name')
  })

  it('ignores the headers without a certificate: the request is anonymous and refused', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/configmaps', undefined, asAdmin, configMap('no-cert'))
    assert.equal(r.status, 403)
    assert.match(r.body.message ?? '', /User "system:anonymous" cannot create/)
    await assertNotStored('no-cert')
  })

  it('publishes the front-proxy settings in kube-system/extension-apiserver-authentication', async () => {
    const data = JSON.parse(await daemon.ok('get', 'configmap', 'extension-apiserver-authentication', '-n', 'kube-system', '-o', 'jsonpath={.data}')) as Record<string, string>
    assert.equal(data['requestheader-client-ca-file'], proxyCa.certificate)
    assert.equal(data['requestheader-allowed-names'], '["front-proxy-client"]')
    assert.equal(data['requestheader-username-headers'], '["X-Remote-User"]')
    assert.match(data['client-ca-file'] ?? '', /BEGIN CERTIFICATE/)
  })

  it('shows the impersonated user to kubectl auth whoami --as --as-group', async () => {
    const out = JSON.parse(await daemon.ok('auth', 'whoami', '--as', 'bob', '--as-group', 'system:masters', '--as-group', 'ops', '-o', 'json')) as {
      status: { userInfo: unknown }
    }
    assert.deepEqual(out.status.userInfo, { username: 'bob', groups: ['system:masters', 'ops', 'system:authenticated'] })
  })

  it('impersonates with 301 --as-group over kubectl\'s HTTP/2, every group kept (Node reset streams of more than 128 fields)', async () => {
    // system:masters among them: the daemon here denies everyone else (AlwaysDeny).
    const groups = ['system:masters', ...Array.from({ length: 300 }, (_, i) => `team-${i}`)]
    const out = JSON.parse(await daemon.ok('auth', 'whoami', '--as', 'bob', ...groups.flatMap((g) => ['--as-group', g]), '-o', 'json')) as {
      status: { userInfo: { username: string; groups: string[] } }
    }
    assert.equal(out.status.userInfo.username, 'bob')
    assert.deepEqual(out.status.userInfo.groups, [...groups, 'system:authenticated'])
  })

  it('authorizes what an impersonated user does as that user', async () => {
    const r = await daemon.kubectl('create', 'configmap', 'as-bob', '-n', 'default', '--as', 'bob')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /configmaps is forbidden: User "bob" cannot create resource "configmaps"/)
    await assertNotStored('as-bob')
  })

  it('refuses impersonation to a user without the right, naming what was refused', async () => {
    // A kubeconfig of alice's own: the admin one would present the admin certificate, which wins over a token.
    const kubeconfig = daemon.manifest(
      'alice.kubeconfig',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${daemon.port}`, 'certificate-authority': join(daemon.certDir, 'ca.crt') } }],
        users: [{ name: 'alice', user: { token: 'alice-token' } }],
        contexts: [{ name: 'alice', context: { cluster: 'c', user: 'alice' } }],
        'current-context': 'alice',
      }),
    )
    // The last --kubeconfig given wins over the admin one Daemon.kubectl passes.
    const r = await daemon.kubectl('--kubeconfig', kubeconfig, 'create', 'configmap', 'stolen', '-n', 'default', '--as', 'admin', '--as-group', 'system:masters')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /users "admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/)
    await assertNotStored('stolen')
  })

  it('trusts a rotated front-proxy CA once its file changes, without a restart', async () => {
    const nextCa = await createCertificateAuthority({ commonName: 'front-proxy-ca-2' })
    const nextProxy = await issueClientCertificate(nextCa, { commonName: 'front-proxy-client', organizations: [] })
    assert.equal((await call('POST', whoami, nextProxy, asAdmin, review)).status, 401)
    writeFileSync(proxyCaFile, proxyCa.certificate + nextCa.certificate)
    const deadline = Date.now() + 15_000
    let status = 0
    while (Date.now() < deadline) {
      status = (await call('POST', whoami, nextProxy, asAdmin, review)).status
      if (status === 201) break
      await new Promise((r) => setTimeout(r, 200))
    }
    assert.equal(status, 201, `the new CA was not trusted in time:\n${daemon.logs.join('')}`)
    // The old CA stays trusted: it is still in the file.
    assert.equal((await call('POST', whoami, proxy, asAdmin, review)).status, 201)
    // Extension servers read the rotated bundle from kube-system, with the other settings as they were.
    const published = async () =>
      JSON.parse(await daemon.ok('get', 'configmap', 'extension-apiserver-authentication', '-n', 'kube-system', '-o', 'jsonpath={.data}')) as Record<string, string>
    let data = await published()
    while (data['requestheader-client-ca-file'] !== proxyCa.certificate + nextCa.certificate && Date.now() < deadline + 15_000) {
      await new Promise((r) => setTimeout(r, 200))
      data = await published()
    }
    assert.equal(data['requestheader-client-ca-file'], proxyCa.certificate + nextCa.certificate)
    assert.equal(data['requestheader-allowed-names'], '["front-proxy-client"]')
    assert.match(data['client-ca-file'] ?? '', /BEGIN CERTIFICATE/)
  })
})
