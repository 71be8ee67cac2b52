/**
 * How the Node runtime's outgoing HTTPS clients (webhooks, proxies) read a
 * caBundle and word a failed connection: as Go's client words it, since
 * that is what users of Kubernetes search for.
 */

/** Node's certificate verification codes that mean "no trusted CA signed this". */
const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
])

/** A Node error worded as a client of Kubernetes reads it (Go's wording where there is a common one). */
export function connectionFailureReason(err: unknown, url: URL): string {
  const code = (err as { code?: unknown } | null)?.code
  const message = err instanceof Error ? err.message : String(err)
  if (typeof code === 'string') {
    if (UNKNOWN_AUTHORITY.has(code)) return `tls: failed to verify certificate: x509: certificate signed by unknown authority (${message})`
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      return `tls: failed to verify certificate: x509: certificate has expired or is not yet valid (${message})`
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: ${message}`
    if (code === 'ECONNREFUSED') return `dial tcp ${url.host}: connect: connection refused`
  }
  return message
}

/** The same reason as an Error. */
export function connectionFailure(err: unknown, url: URL): Error {
  return new Error(connectionFailureReason(err, url))
}

/** The PEM text of a caBundle (base64 of PEM, as the API carries it). */
export function decodeCABundle(caBundle: string): string {
  const pem = Buffer.from(caBundle, 'base64').toString('utf8')
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('the caBundle holds no PEM certificate')
  return pem
}
