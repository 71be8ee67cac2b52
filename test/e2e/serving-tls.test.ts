/**
 * The daemon's TLS options against real clients: a rotated --tls-cert-file
 * is served without a restart, --tls-sni-cert-key picks the certificate by
 * name, openssl's client is refused a cipher or version the flags exclude,
 * and answers carry the HSTS and CORS headers.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import { type CertificateAuthority, createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { Daemon, eventually } from './daemon.js'

/** The common name of the certificate the server presents to a client that asks for `servername`. */
function presentedName(port: number, servername: string | undefined, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ...(servername ? { servername } : {}), ca, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const subject = socket.getPeerCertificate().subject as unknown as Record<string, string> | undefined
      socket.end()
      resolve(subject?.CN ?? '')
    })
    socket.once('error', reject)
  })
}

/** Runs `openssl s_client` against the daemon; true when the handshake succeeded. */
function opensslHandshake(port: number, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-brief', ...args], { timeout: 20_000 }, (err, _stdout, stderr) => {
      resolve(!err && /Protocol version|CONNECTION ESTABLISHED/i.test(String(stderr)))
    })
    child.stdin?.end()
  })
}

function headersOf(port: number, path: string, ca: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'OPTIONS', ca, servername: 'localhost', headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    })
    req.once('error', reject)
    req.end()
  })
}

describe('daemon TLS options', () => {
  let daemon: Daemon
  let ca: CertificateAuthority
  let certFile: string
  let keyFile: string
  let dir: string

  before(async () => {
    ca = await createCertificateAuthority({ commonName: 'serving-test-ca' })
    dir = mkdtempSync(join(tmpdir(), 'apiserver-tls-'))
    const first = await issueServingCertificate(ca, { commonName: 'first', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    const alpha = await issueServingCertificate(ca, { commonName: 'alpha', dnsNames: ['alpha.example.com'], ipAddresses: [] })
    const wild = await issueServingCertificate(ca, { commonName: 'wildcard', dnsNames: ['other.example.org'], ipAddresses: [] })
    certFile = join(dir, 'serving.crt')
    keyFile = join(dir, 'serving.key')
    writeFileSync(certFile, first.certificate)
    writeFileSync(keyFile, first.privateKey)
    writeFileSync(join(dir, 'alpha.crt'), alpha.certificate)
    writeFileSync(join(dir, 'alpha.key'), alpha.privateKey)
    writeFileSync(join(dir, 'wild.crt'), wild.certificate)
    writeFileSync(join(dir, 'wild.key'), wild.privateKey)
    daemon = await Daemon.start([
      `--tls-cert-file=${certFile}`,
      `--tls-private-key-file=${keyFile}`,
      `--tls-sni-cert-key=${join(dir, 'alpha.crt')},${join(dir, 'alpha.key')}`,
      `--tls-sni-cert-key=${join(dir, 'wild.crt')},${join(dir, 'wild.key')}:*.example.com`,
      '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
      '--tls-min-version=VersionTLS12',
      '--strict-transport-security-directives=max-age=31536000,includeSubDomains',
      '--cors-allowed-origins=//example\\.com(:|$)',
    ])
  })

  after(async () => {
    await daemon?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves SNI certificates by name: the certificate\'s own name, an explicit wildcard, the default otherwise', async () => {
    assert.equal(await presentedName(daemon.port, 'alpha.example.com', ca.certificate), 'alpha', 'name extracted from the certificate')
    assert.equal(await presentedName(daemon.port, 'beta.example.com', ca.certificate), 'wildcard', 'explicit wildcard pattern')
    assert.equal(await presentedName(daemon.port, 'other.example.org', ca.certificate), 'first', 'a name the explicit pair was not given is not served by it')
    assert.equal(await presentedName(daemon.port, undefined, ca.certificate), 'first')
  })

  it('refuses a TLS 1.2 cipher outside --tls-cipher-suites and TLS 1.1 below --tls-min-version, and accepts a listed one', async () => {
    // The generated certificates carry ECDSA keys.
    assert.equal(await opensslHandshake(daemon.port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256']), true)
    assert.equal(await opensslHandshake(daemon.port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES256-GCM-SHA384']), false)
    assert.equal(await opensslHandshake(daemon.port, ['-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0']), false)
    assert.equal(await opensslHandshake(daemon.port, ['-tls1_3']), true, 'TLS 1.3 keeps its suites')
  })

  it('adds HSTS to answers and answers a CORS preflight from an allowed origin', async () => {
    const preflight = await headersOf(daemon.port, '/api/v1/namespaces', ca.certificate, { origin: 'https://example.com', 'access-control-request-method': 'GET' })
    assert.equal(preflight.status, 204)
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://example.com')
    assert.equal(preflight.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains')
    const foreign = await headersOf(daemon.port, '/api/v1/namespaces', ca.certificate, { origin: 'https://evil.org' })
    assert.equal(foreign.status, 401, 'a foreign preflight meets authentication')
    assert.equal(foreign.headers['access-control-allow-origin'], undefined)
  })

  it('serves a rotated --tls-cert-file to new connections without a restart', async () => {
    const second = await issueServingCertificate(ca, { commonName: 'second', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    // Written aside and renamed over the old files, as certificate managers do.
    writeFileSync(`${keyFile}.new`, second.privateKey)
    writeFileSync(`${certFile}.new`, second.certificate)
    renameSync(`${keyFile}.new`, keyFile)
    renameSync(`${certFile}.new`, certFile)
    await eventually(async () => assert.equal(await presentedName(daemon.port, 'localhost', ca.certificate), 'second'), 15_000)
    const preflight = await headersOf(daemon.port, '/api/v1/namespaces', ca.certificate, { origin: 'https://example.com' })
    assert.equal(preflight.status, 204, 'a client trusting the CA verifies the new certificate')
  })
})
