/**
 * `kubectl certificate approve` and `deny` against the daemon: the request's
 * requester is the admin who created it, and the approval subresource
 * records the condition kubectl shows.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { loadX509 } from '../../core/pki/x509.js'
import { Daemon } from './daemon.js'

async function requestPem(subject: string): Promise<string> {
  const x509 = await loadX509()
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  type Keys = Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0]['keys']
  const keys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as Keys
  return btoa((await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: algorithm })).toString('pem'))
}

describe('certificate signing requests through kubectl', () => {
  let daemon: Daemon
  before(async () => {
    daemon = await Daemon.start()
  })
  after(async () => {
    await daemon?.stop()
  })

  it('approves one request and denies another, as kubectl get csr then shows', async () => {
    for (const name of ['to-approve', 'to-deny']) {
      const csr = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { signerName: 'example.com/serving', request: await requestPem(`CN=${name}`), usages: ['digital signature'] } }
      await daemon.ok('create', '-f', daemon.manifest(`${name}.json`, JSON.stringify(csr)))
    }
    assert.match(await daemon.ok('certificate', 'approve', 'to-approve'), /certificatesigningrequest\.certificates\.k8s\.io\/to-approve approved/)
    assert.match(await daemon.ok('certificate', 'deny', 'to-deny'), /certificatesigningrequest\.certificates\.k8s\.io\/to-deny denied/)
    const table = await daemon.ok('get', 'csr')
    assert.match(table, /to-approve\s+\S+\s+example\.com\/serving\s+\S+\s+<none>\s+Approved/)
    assert.match(table, /to-deny\s+\S+\s+example\.com\/serving\s+\S+\s+<none>\s+Denied/)
    assert.notEqual(await daemon.ok('get', 'csr', 'to-approve', '-o', 'jsonpath={.spec.username}'), '', 'the requester was recorded')
  })
})
