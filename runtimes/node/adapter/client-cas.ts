/**
 * The two client CAs of the listener: `--client-ca-file` (client certificate
 * users) and `--requestheader-client-ca-file` (the authenticating proxy).
 * TLS verifies a client's chain against both bundles at once; afterwards the
 * chain OpenSSL built (intermediates the client sent included) tells which
 * bundle it ended in, so that core trusts a proxy's headers only for the
 * front-proxy CA and a user certificate only for the client CA.
 */
import { X509Certificate } from 'node:crypto'
import type { DetailedPeerCertificate } from 'node:tls'

export interface ClientCABundles {
  /** PEM bundle of `--client-ca-file`. */
  clientCA?: string
  /** PEM bundle of `--requestheader-client-ca-file`. */
  requestHeaderCA?: string
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/** The certificates of a PEM bundle; throws for a bundle with none or one that does not parse. */
export function parseBundle(pem: string, what: string): X509Certificate[] {
  const blocks = pem.match(PEM_BLOCK) ?? []
  if (blocks.length === 0) throw new Error(`${what}: no certificate found`)
  return blocks.map((block) => new X509Certificate(block))
}

export interface ClientCAs {
  /** Both bundles joined, for the TLS layer's `ca` option; undefined when there is no client CA at all. */
  readonly tlsBundle: string | undefined
  /** Which bundles a verified chain ends in. */
  verifiedBy(peer: DetailedPeerCertificate): { clientCA: boolean; requestHeaderCA: boolean }
}

export function clientCAs(bundles: ClientCABundles): ClientCAs {
  const client = bundles.clientCA ? parseBundle(bundles.clientCA, '--client-ca-file') : []
  const proxy = bundles.requestHeaderCA ? parseBundle(bundles.requestHeaderCA, '--requestheader-client-ca-file') : []
  const clientPrints = new Set(client.map((c) => c.fingerprint256))
  const proxyPrints = new Set(proxy.map((c) => c.fingerprint256))
  // Re-encoded one by one: a bundle whose last line lacks its newline would otherwise merge with the next.
  const all = [...client, ...proxy]
  return {
    tlsBundle: all.length > 0 ? all.map((c) => c.toString()).join('') : undefined,
    verifiedBy(peer) {
      const result = { clientCA: false, requestHeaderCA: false }
      // The issuers above the leaf, up to the self-signed root (whose issuer is itself).
      const seen = new Set<string>()
      let cert: DetailedPeerCertificate | undefined = peer.issuerCertificate
      while (cert?.fingerprint256 && !seen.has(cert.fingerprint256)) {
        seen.add(cert.fingerprint256)
        if (clientPrints.has(cert.fingerprint256)) result.clientCA = true
        if (proxyPrints.has(cert.fingerprint256)) result.requestHeaderCA = true
        cert = cert.issuerCertificate
      }
      return result
    },
  }
}
