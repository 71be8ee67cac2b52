/**
 * CertificateSigningRequests are checked as upstream checks them: a real
 * PKCS#10 request whose signature verifies, known usages, a well-formed
 * signer, a duration of ten minutes at least; through `approval`,
 * conditions that make sense together; through `status`, a certificate
 * that is PEM certificates, set once. Each refusal is a 422 with
 * upstream's message and leaves nothing stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { createCertificateAuthority } from '../../core/pki/certificates.js'
import { csrPem, requestPemText } from './certificate-requests.js'
import { startServer, type TestClient } from './harness.js'

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests'
const MERGE = 'application/merge-patch+json'
const FORM = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const USAGES =
  '"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"'

let api: TestClient
let request: string

before(async () => {
  api = await startServer()
  request = await csrPem('CN=app')
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

const csr = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { signerName: 'example.com/signer', request, usages: ['client auth'], ...spec },
})

/** `[]byte{0x2d, ...}`, as upstream prints the request it refuses. */
const goBytes = (text: string) => `[]byte{${Array.from(new TextEncoder().encode(text), (b) => `0x${b.toString(16)}`).join(', ')}}`

async function refused(name: string, body: unknown, expected: string[]): Promise<void> {
  const res = await api.post(CSRS, body)
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.reason, 'Invalid')
  assert.deepEqual(causes(res.body), expected)
  assert.equal((await api.get(`${CSRS}/${name}`)).status, 404, `${name} was stored`)
}

async function created(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post(CSRS, csr(name, spec))
  assert.equal(res.status, 201, res.text)
  return res.body
}

describe('creating a CertificateSigningRequest', () => {
  it('takes a real request under any name, even one no other kind would allow', async () => {
    await created('Bad_Name:ok')
    await created('ten-minutes', { expirationSeconds: 600 })
    assert.equal((await api.get(`${CSRS}/Bad_Name:ok`)).status, 200)
  })

  it('wants a PEM certificate request, printing what it got as Go prints bytes', async () => {
    await refused('dashes', csr('dashes', { request: btoa('----') }), [
      'spec.request: Invalid value: []byte{0x2d, 0x2d, 0x2d, 0x2d}: PEM block type must be CERTIFICATE REQUEST',
    ])
    await refused('none', { metadata: { name: 'none' }, spec: { signerName: 'example.com/signer', usages: ['client auth'] } }, [
      'spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST',
    ])
    await refused('empty', csr('empty', { request: '' }), ['spec.request: Invalid value: []byte{}: PEM block type must be CERTIFICATE REQUEST'])
    const certificate = (await createCertificateAuthority({ commonName: 'not-a-request' })).certificate
    await refused('certificate', csr('certificate', { request: btoa(certificate) }), [
      `spec.request: Invalid value: ${goBytes(certificate)}: PEM block type must be CERTIFICATE REQUEST`,
    ])
  })

  it('checks the request’s signature and its DER', async () => {
    const pem = await requestPemText('CN=tampered')
    const body = pem.split(/\r?\n/).filter((line) => line && !line.startsWith('-----'))
    const der = Uint8Array.from(atob(body.join('')), (c) => c.charCodeAt(0))
    const wrap = (bytes: Uint8Array) =>
      `-----BEGIN CERTIFICATE REQUEST-----\n${btoa(String.fromCharCode(...bytes)).match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE REQUEST-----\n`
    const tampered = der.slice()
    tampered[tampered.length - 3]! ^= 1
    await refused('tampered', csr('tampered', { request: btoa(wrap(tampered)) }), [
      `spec.request: Invalid value: ${goBytes(wrap(tampered))}: x509: ECDSA verification failure`,
    ])
    const padded = Uint8Array.from([...der, 0, 0])
    await refused('padded', csr('padded', { request: btoa(wrap(padded)) }), [
      `spec.request: Invalid value: ${goBytes(wrap(padded))}: asn1: syntax error: trailing data`,
    ])
    const cut = der.slice(0, der.length - 10)
    await refused('cut', csr('cut', { request: btoa(wrap(cut)) }), [`spec.request: Invalid value: ${goBytes(wrap(cut))}: asn1: syntax error: data truncated`])
  })

  it('wants known usages, each once', async () => {
    await refused('no-usages', csr('no-usages', { usages: [] }), ['spec.usages: Required value: usages must be provided'])
    await refused('odd-usages', csr('odd-usages', { usages: ['client auth', 'flying', 'client auth'] }), [
      `spec.usages[1]: Unsupported value: "flying": supported values: ${USAGES}`,
      'spec.usages[2]: Duplicate value: "client auth"',
    ])
  })

  it('wants a signer named <domain>/<path>, and not the legacy one', async () => {
    await refused('no-signer', csr('no-signer', { signerName: '' }), ['spec.signerName: Required value: signerName must be provided'])
    await refused('bad-signer', csr('bad-signer', { signerName: 'Bad_Value!' }), [`spec.signerName: Invalid value: "Bad_Value!": ${FORM}`])
    await refused('two-slashes', csr('two-slashes', { signerName: 'example.com/a/b' }), [`spec.signerName: Invalid value: "example.com/a/b": ${FORM}`])
    await refused('short-domain', csr('short-domain', { signerName: 'example/signer' }), [
      'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
    ])
    await refused('bad-path', csr('bad-path', { signerName: 'example.com/signer-' }), [
      `spec.signerName: Invalid value: "signer-": validating label "signer-": ${SUBDOMAIN}`,
    ])
    await refused('long-signer', csr('long-signer', { signerName: `example.com/${'a.'.repeat(290)}a` }), ['spec.signerName: Too long: may not be more than 571 bytes'])
    await refused('legacy', csr('legacy', { signerName: 'kubernetes.io/legacy-unknown' }), [
      'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
    ])
  })

  it('wants ten minutes at least', async () => {
    await refused('brief', csr('brief', { expirationSeconds: 599 }), [
      'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    ])
  })

  it('reports every problem at once, in upstream’s order', async () => {
    await refused('all-wrong', { metadata: { name: 'all-wrong' }, spec: { request: btoa('----'), expirationSeconds: 1 } }, [
      'spec.request: Invalid value: []byte{0x2d, 0x2d, 0x2d, 0x2d}: PEM block type must be CERTIFICATE REQUEST',
      'spec.usages: Required value: usages must be provided',
      'spec.signerName: Required value: signerName must be provided',
      'spec.expirationSeconds: Invalid value: 1: may not specify a duration less than 600 seconds (10 minutes)',
    ])
  })
})

describe('updating a CertificateSigningRequest', () => {
  const approved = { type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }
  const denied = { type: 'Denied', status: 'True', reason: 'Test', message: 'no' }

  it('changes metadata through the main endpoint; the request stays as created', async () => {
    const current = await created('metadata-only')
    const put = await api.put(`${CSRS}/metadata-only`, { ...current, metadata: { ...current.metadata, labels: { a: 'b' } }, spec: { ...current.spec, usages: ['flying'] } })
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.body.spec.usages, ['client auth'])
    assert.deepEqual(put.body.metadata.labels, { a: 'b' })
  })

  it('approves through approval, but not both ways, not twice, and with True only', async () => {
    await created('judged')
    const approve = (conditions: unknown[]) => api.patch(`${CSRS}/judged/approval`, { status: { conditions } }, MERGE)
    const both = await approve([approved, denied])
    assert.equal(both.status, 422, both.text)
    assert.deepEqual(causes(both.body), ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'])
    const twice = await approve([approved, approved])
    assert.deepEqual(causes(twice.body), ['status.conditions[1].type: Duplicate value: "Approved"'])
    const odd = await approve([{ ...approved, status: 'False' }, { type: '', status: 'Maybe' }])
    assert.deepEqual(causes(odd.body), [
      'status.conditions[0].status: Unsupported value: "False": supported values: "True"',
      'status.conditions[1].type: Required value',
      'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    ])
    assert.equal((await api.get(`${CSRS}/judged`)).body.status?.conditions, undefined, 'nothing was stored')
    const ok = await approve([approved])
    assert.equal(ok.status, 200, ok.text)
    const undone = await approve([])
    assert.equal(undone.status, 422)
    assert.deepEqual(causes(undone.body), ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"'])
  })

  it('lets status neither approve nor change an approval', async () => {
    await created('signed')
    const added = await api.patch(`${CSRS}/signed/status`, { status: { conditions: [approved] } }, MERGE)
    assert.equal(added.status, 422)
    assert.deepEqual(causes(added.body), ['status.conditions: Forbidden: updates may not add a condition of type "Approved"'])
    assert.equal((await api.patch(`${CSRS}/signed/approval`, { status: { conditions: [approved] } }, MERGE)).status, 200)
    const changed = await api.patch(`${CSRS}/signed/status`, { status: { conditions: [{ ...approved, message: 'changed' }] } }, MERGE)
    assert.equal(changed.status, 422)
    assert.match(causes(changed.body)[0] ?? '', /^status\.conditions: Forbidden: updates may not modify a condition of type "Approved"\n/)
  })

  it('issues a certificate through status once, and only a PEM certificate', async () => {
    await created('issued')
    const issue = (certificate: string) => api.patch(`${CSRS}/issued/status`, { status: { certificate: btoa(certificate) } }, MERGE)
    const junk = await issue('not a certificate')
    assert.equal(junk.status, 422)
    assert.deepEqual(causes(junk.body), ['status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block'])
    const key = await issue('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    assert.deepEqual(causes(key.body), ['status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"'])
    const broken = await issue('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    assert.deepEqual(causes(broken.body), ['status.certificate: Invalid value: "<certificate data>": x509: malformed certificate'])
    assert.equal((await api.get(`${CSRS}/issued`)).body.status?.certificate, undefined, 'nothing was stored')
    const ok = await issue((await createCertificateAuthority({ commonName: 'one' })).certificate)
    assert.equal(ok.status, 200, ok.text)
    const again = await issue((await createCertificateAuthority({ commonName: 'two' })).certificate)
    assert.equal(again.status, 422)
    assert.deepEqual(causes(again.body), ['status.certificate: Forbidden: updates may not modify existing certificate content'])
  })
})
