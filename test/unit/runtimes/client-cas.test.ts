/**
 * A verdict of the client CA bundles on a chain is for one moment: it says
 * until when it holds, and past a certificate's validity it refuses it with
 * Go's x509 words, whatever the handshake said earlier.
 */
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { before, describe, it } from 'node:test'
import { type CertificateAuthority, type CertificateKeyPair, createCertificateAuthority, issueClientCertificate } from '../../../core/pki/certificates.js'
import { clientCAs, type PresentedChain } from '../../../runtimes/node/adapter/client-cas.js'

describe('clientCAs().verify', () => {
  let clientCa: CertificateAuthority
  let proxyCa: CertificateAuthority
  let alice: CertificateKeyPair
  let chain: PresentedChain

  before(async () => {
    clientCa = await createCertificateAuthority({ commonName: 'client-ca' })
    proxyCa = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    alice = await issueClientCertificate(clientCa, { commonName: 'alice', organizations: [], validityDays: 2 })
    chain = { leaf: new X509Certificate(alice.certificate), candidates: [] }
  })

  it("holds a verdict until the leaf's notAfter", () => {
    const cas = clientCAs({ clientCA: clientCa.certificate, requestHeaderCA: proxyCa.certificate })
    assert.deepEqual(cas.verify(chain, Date.now()), { clientCA: true, requestHeaderCA: false, holdsUntil: Date.parse(chain.leaf.validTo) })
  })

  it('refuses the leaf a moment past its notAfter, in Go x509 words, for good', () => {
    const cas = clientCAs({ clientCA: clientCa.certificate, requestHeaderCA: clientCa.certificate })
    const notAfter = Date.parse(chain.leaf.validTo)
    const verdict = cas.verify(chain, notAfter + 1000)
    assert.deepEqual(verdict, {
      clientCA: false,
      requestHeaderCA: false,
      leafInvalid: `x509: certificate has expired or is not yet valid: current time ${new Date(notAfter + 1000).toISOString().replace('.000Z', 'Z')} is after ${new Date(notAfter).toISOString().replace('.000Z', 'Z')}`,
      holdsUntil: Infinity,
    })
    // Its last second is still inside.
    assert.equal(cas.verify(chain, notAfter).clientCA, true)
  })

  it('refuses a leaf not yet valid until its notBefore', () => {
    const cas = clientCAs({ clientCA: clientCa.certificate })
    const notBefore = Date.parse(chain.leaf.validFrom)
    const verdict = cas.verify(chain, notBefore - 1000)
    assert.equal(verdict.clientCA, false)
    assert.match(verdict.leafInvalid ?? '', /^x509: certificate has expired or is not yet valid: current time \S+Z is before \S+Z$/)
    assert.equal(verdict.holdsUntil, notBefore - 1)
  })

  it('finds no path to bundles without the CA, and holds that until the bundles change', () => {
    const verdict = clientCAs({ clientCA: proxyCa.certificate }).verify(chain, Date.now())
    assert.deepEqual(verdict, { clientCA: false, requestHeaderCA: false, holdsUntil: Infinity })
  })
})
