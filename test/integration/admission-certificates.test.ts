/**
 * The certificate plugins as attacks: signing a CertificateSigningRequest
 * (writing its certificate through `status`) needs `sign` on its signer, and
 * nobody may ask the API server's client signer for `system:masters`. Each
 * refusal is 403 and leaves the request as it was.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCertificateAuthority } from '../../core/pki/certificates.js'
import { csrPem } from './certificate-requests.js'
import { startServer, type TestClient } from './harness.js'
import { as, grant, tokens } from './rbac-fixtures.js'

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests'
const MERGE = 'application/merge-patch+json'

async function cluster(): Promise<TestClient> {
  const api = await startServer({
    authentication: { tokens },
    authorizationModes: ['RBAC'],
    bootstrapRbacPolicy: false,
    admission: { plugins: ['CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction'] },
  })
  const csrRules = {
    apiGroups: ['certificates.k8s.io'],
    resources: ['certificatesigningrequests', 'certificatesigningrequests/status', 'certificatesigningrequests/approval'],
  }
  for (const who of ['alice', 'bob'] as const) await grant(api, who, `${who}-csr`, [{ verbs: ['create', 'get', 'update', 'patch'], ...csrRules }])
  // Bob may sign for every signer of example.com, through the domain wildcard.
  await grant(api, 'bob', 'bob-signer', [{ verbs: ['sign', 'approve'], apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'] }])
  return api
}

describe('CertificateSigning', () => {
  it('refuses to issue a certificate without sign on the signer, and lets a signer of the domain issue it', async () => {
    const api = await cluster()
    const created = await api.post(CSRS, { metadata: { name: 'csr1' }, spec: { signerName: 'example.com/serving', request: await csrPem('CN=app'), usages: ['digital signature'] } }, as('alice'))
    assert.equal(created.status, 201, created.text)
    // A real certificate: the server parses what a signer issues.
    const issue = { status: { certificate: btoa((await createCertificateAuthority({ commonName: 'signer' })).certificate) } }
    const refused = await api.patch(`${CSRS}/csr1/status`, issue, MERGE, as('alice'))
    assert.equal(refused.status, 403)
    assert.equal(refused.body.reason, 'Forbidden')
    assert.equal(
      refused.body.message,
      'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: user not permitted to sign requests with signerName "example.com/serving"',
    )
    assert.equal((await api.get(`${CSRS}/csr1`)).body.status?.certificate, undefined)
    const signed = await api.patch(`${CSRS}/csr1/status`, issue, MERGE, as('bob'))
    assert.equal(signed.status, 200, signed.text)
    assert.ok(signed.body.status.certificate)
  })
})

describe('CertificateApproval and the approval subresource', () => {
  it('records the requester as who asked, refuses approval without approve on the signer, and lets an approver change the conditions alone', async () => {
    const api = await cluster()
    const spec = { signerName: 'example.com/serving', request: await csrPem('CN=app'), usages: ['digital signature'], username: 'someone-else', groups: ['system:masters'] }
    const created = await api.post(CSRS, { metadata: { name: 'csr2' }, spec }, as('alice'))
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.spec.username, 'alice', 'the requester is who asked, not what the body claims')
    assert.ok(!created.body.spec.groups.includes('system:masters'))

    const approve = (who: 'alice' | 'bob') => {
      const body = structuredClone(created.body)
      body.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: `approved by ${who}` }] }
      body.spec.signerName = 'example.com/other'
      return api.put(`${CSRS}/csr2/approval`, body, as(who))
    }
    const refused = await approve('alice')
    assert.equal(refused.status, 403)
    assert.equal(
      refused.body.message,
      'certificatesigningrequests.certificates.k8s.io "csr2" is forbidden: user not permitted to approve requests with signerName "example.com/serving"',
    )
    assert.equal((await api.get(`${CSRS}/csr2`)).body.status?.conditions, undefined, 'nothing was stored')

    const approved = await approve('bob')
    assert.equal(approved.status, 200, approved.text)
    assert.deepEqual(
      approved.body.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]),
      [['Approved', 'True']],
    )
    assert.equal(approved.body.spec.signerName, 'example.com/serving', 'the approval subresource changes the conditions alone')
  })
})

describe('CertificateSubjectRestriction', () => {
  it('refuses a request for system:masters from the API server client signer and stores nothing', async () => {
    const api = await cluster()
    const spec = { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] }
    const res = await api.post(CSRS, { metadata: { name: 'escalate' }, spec: { ...spec, request: await csrPem('CN=alice, O=system:masters') } }, as('alice'))
    assert.equal(res.status, 403)
    assert.equal(
      res.body.message,
      'certificatesigningrequests.certificates.k8s.io "escalate" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    )
    assert.equal((await api.get(`${CSRS}/escalate`)).status, 404)
    const ordinary = await api.post(CSRS, { metadata: { name: 'ordinary' }, spec: { ...spec, request: await csrPem('CN=alice, O=dev') } }, as('alice'))
    assert.equal(ordinary.status, 201, ordinary.text)
  })
})
