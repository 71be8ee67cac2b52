import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { certificateApproval } from '../../../core/admission/builtin/certificate-approval.js'
import { certificateSigning } from '../../../core/admission/builtin/certificate-signing.js'
import { clusterTrustBundleAttest } from '../../../core/admission/builtin/cluster-trust-bundle-attest.js'
import type { Attributes, Authorizer } from '../../../core/authz/authorizer.js'
import { certificateSigningRequests } from '../../../core/resources/groups/certificates.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { attributes, forbiddenMessage } from './admission-fixture.js'

/** Allows exactly the (verb, signer name) pairs given, and records what it was asked. */
function signerAuthorizer(allowed: string[]): Authorizer & { asked: string[] } {
  const asked: string[] = []
  return {
    asked,
    authorize: async (a: Attributes) => {
      asked.push(`${a.verb} ${a.apiGroup}/${a.resource} ${a.name}`)
      return { decision: allowed.includes(`${a.verb} ${a.name}`) ? 'allow' : 'no-opinion', reason: '' }
    },
  }
}

const csr = (signerName: string, status: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name: 'csr1' }, spec: { signerName, request: '' }, status }) as KubeObject

describe('CertificateApproval', () => {
  const update = (subresource: string) =>
    attributes(certificateSigningRequests, { operation: 'UPDATE', subresource, name: 'csr1', object: csr('example.com/a'), oldObject: csr('example.com/a') })

  it('asks for approve on the signer, then on its domain wildcard', async () => {
    const authz = signerAuthorizer([])
    const message = await forbiddenMessage(() => certificateApproval(authz).validate(update('approval')))
    assert.equal(message, 'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: user not permitted to approve requests with signerName "example.com/a"')
    assert.deepEqual(authz.asked, ['approve certificates.k8s.io/signers example.com/a', 'approve certificates.k8s.io/signers example.com/*'])
  })

  const allowedBy: [string, string][] = [
    ['the exact signer', 'approve example.com/a'],
    ['the domain wildcard', 'approve example.com/*'],
  ]
  for (const [what, grant] of allowedBy)
    it(`admits with approve on ${what}`, async () => {
      await certificateApproval(signerAuthorizer([grant])).validate(update('approval'))
    })

  it('ignores other subresources', async () => {
    await certificateApproval(signerAuthorizer([])).validate(update('status'))
  })
})

describe('CertificateSigning', () => {
  it('needs sign when the certificate or the conditions change, not otherwise', async () => {
    const authz = signerAuthorizer([])
    const old = csr('example.com/a')
    const same = attributes(certificateSigningRequests, { operation: 'UPDATE', subresource: 'status', name: 'csr1', object: csr('example.com/a', { conditions: [] }), oldObject: old })
    await certificateSigning(authz).validate(same)
    const issued = attributes(certificateSigningRequests, { operation: 'UPDATE', subresource: 'status', name: 'csr1', object: csr('example.com/a', { certificate: 'QQ==' }), oldObject: old })
    assert.equal(
      await forbiddenMessage(() => certificateSigning(authz).validate(issued)),
      'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: user not permitted to sign requests with signerName "example.com/a"',
    )
    await certificateSigning(signerAuthorizer(['sign example.com/a'])).validate(issued)
  })
})

describe('ClusterTrustBundleAttest', () => {
  const bundles = { ...certificateSigningRequests, resource: 'clustertrustbundles', kind: 'ClusterTrustBundle', version: 'v1alpha1' }
  const bundle = { metadata: { name: 'b' }, spec: { signerName: 'example.com/a', trustBundle: '' } } as KubeObject

  it('admits everything with its feature gate off, the default at v1.32', async () => {
    await clusterTrustBundleAttest(signerAuthorizer([]), false).validate(attributes(bundles, { object: bundle }))
  })

  it('needs attest on the signer with the gate on', async () => {
    const message = await forbiddenMessage(() => clusterTrustBundleAttest(signerAuthorizer([]), true).validate(attributes(bundles, { object: bundle })))
    assert.equal(message, 'clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "example.com/a"')
    await clusterTrustBundleAttest(signerAuthorizer(['attest example.com/*']), true).validate(attributes(bundles, { object: bundle }))
  })
})
