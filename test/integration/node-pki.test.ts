/** The daemon's certificate directory: first start creates, later starts reuse, user files win. */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { createCertificateAuthority, issueServingCertificate, loadCertificateAuthority, summarizeCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { CERT_DIR_CA_PREFIX, FILES, preparePki, servingNames } from '../../runtimes/node/daemon/pki.js'

const base = { bindAddress: '0.0.0.0', hostname: 'node-a', logger: silentLogger }

describe('preparePki', () => {
  let root: string
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'apiserver-pki-'))
  })
  after(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('creates CA, serving, admin and kubeconfig with private modes, then reuses them', async () => {
    const certDir = join(root, 'fresh', 'pki')
    const pki = await preparePki({ ...base, certDir, advertiseAddress: '10.1.2.3' })
    const path = await pki.writeKubeconfig('https://127.0.0.1:6443')
    assert.equal(path, join(certDir, FILES.kubeconfig))
    assert.equal((await stat(certDir)).mode & 0o777, 0o700)
    for (const file of Object.values(FILES)) assert.equal((await stat(join(certDir, file))).mode & 0o777, 0o600, file)

    const serving = await summarizeCertificate(pki.serving.certificate)
    assert.ok(serving.dnsNames.includes('localhost') && serving.dnsNames.includes('node-a'))
    assert.deepEqual(serving.ipAddresses, ['127.0.0.1', '::1', '10.1.2.3'])
    const admin = await summarizeCertificate(await readFile(join(certDir, FILES.adminCert), 'utf8'))
    assert.equal(admin.commonName, 'kubernetes-admin')
    assert.deepEqual(admin.organizations, ['system:masters'])
    assert.equal(pki.clientCA, await readFile(join(certDir, FILES.caCert), 'utf8'))

    const kc = parse(await readFile(path, 'utf8'))
    assert.equal(kc['current-context'], 'admin@apiserver')
    assert.equal(kc.clusters[0].cluster.server, 'https://127.0.0.1:6443')
    assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), pki.clientCA)
    assert.match(Buffer.from(kc.users[0].user['client-key-data'], 'base64').toString(), /^-----BEGIN PRIVATE KEY-----/)

    // Second start: same files; only the kubeconfig follows a new port.
    const before = await Promise.all(['caCert', 'servingCert', 'adminCert'].map((k) => readFile(join(certDir, FILES[k as 'caCert']), 'utf8')))
    const again = await preparePki({ ...base, certDir, advertiseAddress: '10.1.2.3' })
    assert.equal(again.serving.certificate, pki.serving.certificate)
    await again.writeKubeconfig('https://127.0.0.1:7443')
    const after = await Promise.all(['caCert', 'servingCert', 'adminCert'].map((k) => readFile(join(certDir, FILES[k as 'caCert']), 'utf8')))
    assert.deepEqual(after, before)
    assert.equal(parse(await readFile(path, 'utf8')).clusters[0].cluster.server, 'https://127.0.0.1:7443')
  })

  it('re-issues the serving certificate when a new address must be covered, keeping the CA', async () => {
    const certDir = join(root, 'readdress')
    const first = await preparePki({ ...base, certDir })
    const ca = await readFile(join(certDir, FILES.caCert), 'utf8')
    const second = await preparePki({ ...base, certDir, bindAddress: '127.0.0.2' })
    assert.notEqual(second.serving.certificate, first.serving.certificate)
    assert.ok((await summarizeCertificate(second.serving.certificate)).ipAddresses.includes('127.0.0.2'))
    assert.equal(await readFile(join(certDir, FILES.caCert), 'utf8'), ca)
  })

  it('re-issues a leaf an earlier CA of ours signed, one about to expire, and one missing an IPv6 address, on a restart', async () => {
    const certDir = join(root, 'stale')
    await preparePki({ ...base, certDir })
    const earlier = await createCertificateAuthority({ commonName: `${CERT_DIR_CA_PREFIX}1` })
    const foreign = await issueServingCertificate(earlier, { commonName: 'kube-apiserver', ...servingNames(base) })
    await writeFile(join(certDir, FILES.servingCert), foreign.certificate)
    await writeFile(join(certDir, FILES.servingKey), foreign.privateKey)
    const resigned = await preparePki({ ...base, certDir })
    assert.notEqual(resigned.serving.certificate, foreign.certificate)

    const ca = { certificate: await readFile(join(certDir, FILES.caCert), 'utf8'), privateKey: await readFile(join(certDir, FILES.caKey), 'utf8') }
    const expiring = await issueServingCertificate(await loadCertificateAuthority(ca), {
      commonName: 'kube-apiserver',
      ...servingNames(base),
      now: new Date(Date.now() - 360 * 24 * 60 * 60 * 1000),
    })
    await writeFile(join(certDir, FILES.servingCert), expiring.certificate)
    await writeFile(join(certDir, FILES.servingKey), expiring.privateKey)
    const renewed = await preparePki({ ...base, certDir })
    assert.notEqual(renewed.serving.certificate, expiring.certificate)

    const moved = await preparePki({ ...base, certDir, bindAddress: 'fd00::5' })
    assert.ok((await summarizeCertificate(moved.serving.certificate)).ipAddresses.includes('fd00::5'))
    // Written as fd00::5, read back from the certificate in OpenSSL's long form: the same address, nothing re-issued.
    const kept = await preparePki({ ...base, certDir, bindAddress: 'fd00:0::5' })
    assert.equal(kept.serving.certificate, moved.serving.certificate)
  })

  it('refuses to start when the CA key in the cert dir is not a key', async () => {
    const certDir = join(root, 'bad-ca')
    await preparePki({ ...base, certDir })
    await writeFile(join(certDir, FILES.caKey), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    await assert.rejects(preparePki({ ...base, certDir }), /ca\.crt: cannot load the CA/)
  })

  it("uses the user's serving certificate and key as given", async () => {
    const certDir = join(root, 'user-serving')
    const userCa = await createCertificateAuthority({ commonName: 'corp' })
    const pair = await issueServingCertificate(userCa, { commonName: 'api.corp', dnsNames: ['api.corp'], ipAddresses: [] })
    await writeFile(join(root, 'tls.crt'), pair.certificate)
    await writeFile(join(root, 'tls.key'), pair.privateKey)
    const pki = await preparePki({ ...base, certDir, tlsCertFile: join(root, 'tls.crt'), tlsPrivateKeyFile: join(root, 'tls.key') })
    assert.equal(pki.serving.certificate, pair.certificate)
    assert.equal(pki.serving.privateKey, pair.privateKey)
    // Client certificates still work out of the box: our CA, our admin.
    const kc = parse((await readFile((await pki.writeKubeconfig('https://api.corp:6443')) ?? '', 'utf8')) as string)
    assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), pair.certificate)
    await assert.rejects(stat(join(certDir, FILES.servingCert)))
  })

  it('serves a pair another CA issued that the user put in the cert dir unchanged, and never rewrites it', async () => {
    const certDir = join(root, 'harness')
    await mkdir(certDir, { recursive: true })
    const harnessCa = await createCertificateAuthority({ commonName: 'envtest-environment' })
    const pair = await issueServingCertificate(harnessCa, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    await writeFile(join(certDir, FILES.servingCert), pair.certificate)
    await writeFile(join(certDir, FILES.servingKey), pair.privateKey)
    await writeFile(join(root, 'harness-clients.crt'), harnessCa.certificate)

    // With the user's client CA: nothing of ours is needed, nothing is written.
    const withClientCa = await preparePki({ ...base, certDir, clientCaFile: join(root, 'harness-clients.crt') })
    assert.equal(withClientCa.serving.certificate, pair.certificate)
    assert.equal(withClientCa.serving.privateKey, pair.privateKey)
    assert.deepEqual((await readdir(certDir)).sort(), [FILES.servingCert, FILES.servingKey])

    // Without: our CA and admin appear beside it, and a restart (our CA now present) still serves the user's pair.
    for (let start = 0; start < 2; start++) {
      const pki = await preparePki({ ...base, certDir })
      assert.equal(pki.serving.certificate, pair.certificate)
      const kc = parse(await readFile((await pki.writeKubeconfig('https://127.0.0.1:6443')) ?? '', 'utf8'))
      assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), pair.certificate)
    }
    assert.equal(await readFile(join(certDir, FILES.servingCert), 'utf8'), pair.certificate)
    assert.equal(await readFile(join(certDir, FILES.servingKey), 'utf8'), pair.privateKey)
  })

  it("trusts the user's client CA and then mints no admin kubeconfig", async () => {
    const certDir = join(root, 'user-ca')
    const userCa = await createCertificateAuthority({ commonName: 'corp-clients' })
    await writeFile(join(root, 'clients.crt'), userCa.certificate)
    const pki = await preparePki({ ...base, certDir, clientCaFile: join(root, 'clients.crt') })
    assert.equal(pki.clientCA, userCa.certificate)
    assert.equal(await pki.writeKubeconfig('https://127.0.0.1:6443'), undefined)
    await assert.rejects(stat(join(certDir, FILES.adminCert)))
    // The serving certificate is still generated.
    assert.ok((await summarizeCertificate(pki.serving.certificate)).dnsNames.includes('localhost'))
  })

  it('mints the admin kubeconfig when the client CA file is our own CA', async () => {
    const certDir = join(root, 'own-ca')
    await preparePki({ ...base, certDir })
    const pki = await preparePki({ ...base, certDir, clientCaFile: join(certDir, FILES.caCert) })
    assert.ok(await pki.writeKubeconfig('https://127.0.0.1:6443'))
  })

  it('names the file when a user file cannot be read', async () => {
    await assert.rejects(
      preparePki({ ...base, certDir: join(root, 'x'), clientCaFile: join(root, 'missing.crt') }),
      /--client-ca-file: cannot read .*missing\.crt/,
    )
  })

  it('skips a hostname that is not a DNS name and unspecified addresses', () => {
    const names = servingNames({ bindAddress: '::', hostname: 'My_Host' })
    assert.ok(!names.dnsNames.some((n) => n.includes('_')))
    assert.deepEqual(names.ipAddresses, ['127.0.0.1', '::1'])
  })
})
