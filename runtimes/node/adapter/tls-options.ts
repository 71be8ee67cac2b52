/**
 * `--tls-cipher-suites` and `--tls-min-version` in OpenSSL's terms. The
 * flags name suites as Go (and IANA) does; Node's TLS is OpenSSL, which
 * names the TLS 1.2 suites differently. TLS 1.3 suites keep their names.
 */
import type { SecureVersion } from 'node:tls'

const OPENSSL_NAMES: Readonly<Record<string, string>> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
}

/** The TLS 1.3 suites Node offers by default. */
const DEFAULT_TLS13 = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256']

export class CipherSuiteError extends Error {}

/**
 * The OpenSSL cipher list for the flag's suites, or undefined for the
 * runtime's defaults. As in Go, the list restricts TLS 1.2 and older; TLS
 * 1.3 keeps its suites unless the list names some of them.
 */
export function opensslCipherList(goNames: readonly string[]): string | undefined {
  if (goNames.length === 0) return undefined
  const unknown = goNames.filter((name) => !(name in OPENSSL_NAMES))
  if (unknown.length > 0) throw new CipherSuiteError(`--tls-cipher-suites: Cipher suite ${unknown.join(', ')} not supported or doesn't exist`)
  const names = [...new Set(goNames.map((name) => OPENSSL_NAMES[name] ?? name))]
  const tls13 = names.filter((name) => name.startsWith('TLS_'))
  return [...(tls13.length > 0 ? tls13 : DEFAULT_TLS13), ...names.filter((name) => !name.startsWith('TLS_'))].join(':')
}

const MIN_VERSIONS: Readonly<Record<string, SecureVersion>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
}

/** `--tls-min-version` in Node's words; blank keeps TLS 1.2, upstream's default. */
export function minTlsVersion(flag: string): SecureVersion {
  return MIN_VERSIONS[flag] ?? 'TLSv1.2'
}
