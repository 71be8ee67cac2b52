/**
 * `--tls-sni-cert-key`: which certificate a client that names a host (SNI)
 * is served, as upstream chooses it. Each pair serves the names given after
 * its `:`, or else the names of its certificate (the DNS names, and the
 * common name when it is a domain; IPs in a certificate are never used,
 * since clients do not send IPs by SNI). Given names beat extracted ones,
 * an earlier flag beats a later one, an exact name beats a wildcard.
 */
import { X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls'

export interface SniPair {
  /** PEM certificate (chain) and key. */
  cert: string
  key: string
  /** The names after the `:` of the flag; empty: the certificate's own. */
  names: readonly string[]
}

const DOMAIN = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** The names a certificate is served for when the flag gives none. */
export function certificateNames(pem: string): string[] {
  const cert = new X509Certificate(pem)
  const names: string[] = []
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1]
  if (cn && isIP(cn) === 0 && (cn === '*' || DOMAIN.test(cn.toLowerCase()))) names.push(cn)
  for (const entry of (cert.subjectAltName ?? '').split(', ')) {
    if (entry.startsWith('DNS:')) names.push(entry.slice(4))
  }
  return names
}

/**
 * Builds the name → context map once; the function answers a client's
 * server name with its context, or undefined for the default certificate.
 * Throws when a pair does not load (a key that does not match, bad PEM).
 */
export function sniSelector(pairs: readonly SniPair[], base: SecureContextOptions): (servername: string) => SecureContext | undefined {
  const explicit = new Map<string, SecureContext>()
  const extracted = new Map<string, SecureContext>()
  // The later pair first, so that an earlier one overwrites it: the first flag wins.
  for (const pair of [...pairs].reverse()) {
    const context = createSecureContext({ ...base, cert: pair.cert, key: pair.key })
    const [names, map] = pair.names.length > 0 ? [pair.names, explicit] : [certificateNames(pair.cert), extracted]
    for (const name of names) map.set(name.toLowerCase(), context)
  }
  const byName = new Map([...extracted, ...explicit])
  return (servername) => {
    const name = servername.toLowerCase()
    const exact = byName.get(name)
    if (exact) return exact
    const labels = name.split('.')
    if (labels.length < 2) return undefined
    return byName.get(['*', ...labels.slice(1)].join('.'))
  }
}
