/**
 * The checks a restart makes on the certificates already in --cert-dir, with
 * Node's own X.509 parser: a start that reuses every certificate never loads
 * the X.509 library that issuing needs (about a fifth of the daemon's
 * start-up time on a small machine).
 */
import { X509Certificate } from 'node:crypto'
import { formatIP, parseIP } from '../../../core/machinery/ip.js'
import { pemDecodeAll } from '../../../core/pki/pem.js'
import type { CertificateKeyPair } from '../../../core/pki/certificates.js'

/** Leaves are re-issued at start when they expire within this window (k3s renews at 90 days; leaves live a year). */
export const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000

/** The same key for `::1` and OpenSSL's `0:0:0:0:0:0:0:1`. */
function ipKey(text: string): string {
  const ip = parseIP(text)
  return ip ? formatIP(ip) : text.toLowerCase()
}

/** The DNS names and IP addresses of a subjectAltName as Node prints it (`DNS:a, IP Address:b`). */
function altNames(cert: X509Certificate): { dnsNames: Set<string>; ipAddresses: Set<string> } {
  const dnsNames = new Set<string>()
  const ipAddresses = new Set<string>()
  for (const entry of (cert.subjectAltName ?? '').split(', ')) {
    if (entry.startsWith('DNS:')) dnsNames.add(entry.slice(4))
    else if (entry.startsWith('IP Address:')) ipAddresses.add(ipKey(entry.slice(11)))
  }
  return { dnsNames, ipAddresses }
}

/** The CA of the cert dir as a restart checks it: readable, its key a PKCS#8 ECDSA P-256 key, as issuing will need. */
export async function checkCertDirCa(pair: CertificateKeyPair): Promise<{ notAfter: Date }> {
  if (!pemDecodeAll(pair.certificate).some((b) => b.label === 'CERTIFICATE')) throw new Error('no CERTIFICATE block in the CA certificate')
  const keyBlock = pemDecodeAll(pair.privateKey).find((b) => b.label === 'PRIVATE KEY')
  if (!keyBlock) throw new Error('no PKCS#8 "PRIVATE KEY" block in the CA key')
  const cert = new X509Certificate(pair.certificate)
  await crypto.subtle.importKey('pkcs8', keyBlock.der, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])
  return { notAfter: new Date(cert.validTo) }
}

/**
 * Whether a certificate was issued by a CA the daemon created (its issuer's
 * common name starts with `prefix`); an unreadable one counts as ours, so
 * that it is re-issued rather than served.
 */
export function isIssuedByCertDirCa(certificatePem: string, prefix: string): boolean {
  try {
    const issuer = new X509Certificate(certificatePem).issuer
    return issuer.split('\n').some((part) => part.startsWith(`CN=${prefix}`))
  } catch {
    return true
  }
}

/** Why an existing leaf must be re-issued, or undefined when it can be reused. */
export function leafStaleness(pair: CertificateKeyPair, caCertificate: string, now: Date, names?: { dnsNames: string[]; ipAddresses: string[] }): string | undefined {
  let leaf: X509Certificate
  let ca: X509Certificate
  try {
    leaf = new X509Certificate(pair.certificate)
  } catch {
    return 'unreadable'
  }
  try {
    ca = new X509Certificate(caCertificate)
    if (leaf.issuer !== ca.subject || !leaf.verify(ca.publicKey)) return 'not signed by the CA in the cert dir'
  } catch {
    return 'not signed by the CA in the cert dir'
  }
  const notAfter = new Date(leaf.validTo)
  if (notAfter.getTime() - now.getTime() < RENEW_BEFORE_MS) return `expires ${notAfter.toISOString()}`
  if (names) {
    const has = altNames(leaf)
    const missing = [...names.dnsNames.filter((n) => !has.dnsNames.has(n)), ...names.ipAddresses.filter((ip) => !has.ipAddresses.has(ipKey(ip)))]
    if (missing.length) return `does not cover ${missing.join(', ')}`
  }
  return undefined
}
