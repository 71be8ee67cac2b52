/**
 * What is wrong, if anything, with the PEM a CertificateSigningRequest
 * carries: its PKCS#10 request (spec.request, whose signature must verify)
 * and the certificate a signer issued (status.certificate). The answers
 * are the texts upstream reports, which are Go's error strings: those of
 * encoding/asn1 and crypto/x509 for the cases a client meets (no PEM, a
 * truncated or padded request, a signature that does not verify). Where
 * Go's asn1 decoder describes its own reflection state ("tags don't
 * match (16 vs {class:...}) ..."), a shorter text of ours stands in.
 * Checking a signature is asynchronous, hence these are too.
 */
import { loadX509 } from '../../pki/x509.js'
import { decodePemBlock } from './go-pem.js'

const REQUEST_BLOCK = 'CERTIFICATE REQUEST'
const CERTIFICATE_BLOCK = 'CERTIFICATE'

/** How long the DER element at the start of `der` is, or Go's asn1 syntax error for a header that does not fit. */
function derElementLength(der: Uint8Array): number | string {
  if (der.length === 0) return 'asn1: syntax error: sequence truncated'
  if (der.length < 2) return 'asn1: syntax error: truncated tag or length'
  const first = der[1] ?? 0
  let header = 2
  let length = first
  if (first & 0x80) {
    const octets = first & 0x7f
    if (der.length < 2 + octets) return 'asn1: syntax error: truncated tag or length'
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + (der[2 + i] ?? 0)
    header += octets
  }
  if (header + length > der.length) return 'asn1: syntax error: data truncated'
  return header + length
}

/** Go's CheckSignature failure for the request's key. */
function signatureFailure(keyAlgorithm: string): string {
  if (keyAlgorithm === 'ECDSA') return 'x509: ECDSA verification failure'
  if (keyAlgorithm === 'Ed25519') return 'x509: Ed25519 verification failure'
  if (keyAlgorithm.startsWith('RSA')) return 'crypto/rsa: verification error'
  return 'x509: cannot verify signature: algorithm unimplemented'
}

/** Why `pem` is not a PEM-encoded PKCS#10 request with a valid signature, or undefined when it is one. */
export async function certificateRequestProblem(pem: Uint8Array | undefined): Promise<string | undefined> {
  const block = pem && decodePemBlock(pem)?.block
  if (!block || block.type !== REQUEST_BLOCK) return 'PEM block type must be CERTIFICATE REQUEST'
  const length = derElementLength(block.bytes)
  if (typeof length === 'string') return length
  const x509 = await loadX509()
  let request: InstanceType<typeof x509.Pkcs10CertificateRequest>
  try {
    request = new x509.Pkcs10CertificateRequest(block.bytes.slice(0, length))
  } catch {
    return 'asn1: structure error: not a PKCS#10 certificate request'
  }
  if (length < block.bytes.length) return 'asn1: syntax error: trailing data'
  const keyAlgorithm = request.publicKey.algorithm.name
  try {
    return (await request.verify()) ? undefined : signatureFailure(keyAlgorithm)
  } catch {
    return 'x509: cannot verify signature: algorithm unimplemented'
  }
}

/** Why `pem` is not a chain of PEM certificates without headers, or undefined when it is one (or empty). */
export async function issuedCertificateProblem(pem: Uint8Array | undefined): Promise<string | undefined> {
  if (!pem || pem.length === 0) return undefined
  let blocks = 0
  let rest = pem
  for (let decoded = decodePemBlock(rest); decoded; decoded = decodePemBlock(rest)) {
    const { block } = decoded
    if (block.type !== CERTIFICATE_BLOCK) return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`
    if (Object.keys(block.headers).length) return 'no PEM block headers are permitted'
    blocks++
    // One block may hold several DER certificates back to back, as Go's ParseCertificates reads it.
    let der = block.bytes
    if (der.length === 0) return 'found CERTIFICATE PEM block containing 0 certificates'
    const x509 = await loadX509()
    while (der.length > 0) {
      const length = derElementLength(der)
      if (typeof length === 'string') return 'x509: malformed certificate'
      try {
        new x509.X509Certificate(der.slice(0, length))
      } catch {
        return 'x509: malformed certificate'
      }
      der = der.subarray(length)
    }
    rest = decoded.rest
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined
}
