/**
 * The two client CAs of the listener: `--client-ca-file` (client certificate
 * users) and `--requestheader-client-ca-file` (the authenticating proxy).
 * TLS verifies a client's chain against both bundles at once; afterwards the
 * chain is verified again against each bundle alone, as upstream verifies a
 * certificate against one pool at a time, so that core trusts a proxy's
 * headers only for the front-proxy CA and a user certificate only for the
 * client CA.
 *
 * The chain Node reports is no proof: it is put together by names and key
 * ids, and a client may send an "intermediate" of its own making that names
 * the other bundle's CA as its issuer. Each link of the path is checked by
 * its signature here.
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
  // Re-encoded one by one: a bundle whose last line lacks its newline would otherwise merge with the next.
  const all = [...client, ...proxy]
  return {
    tlsBundle: all.length > 0 ? all.map((c) => c.toString()).join('') : undefined,
    verifiedBy(peer) {
      const leaf = new X509Certificate(peer.raw)
      // The certificates the client sent and those OpenSSL looked up: candidates for the links, none trusted for itself.
      const candidates: X509Certificate[] = []
      const seen = new Set<string>([peer.fingerprint256])
      for (let cert = peer.issuerCertificate; cert?.raw && !seen.has(cert.fingerprint256); cert = cert.issuerCertificate) {
        seen.add(cert.fingerprint256)
        if (candidates.length < MAX_CHAIN_CERTIFICATES) candidates.push(new X509Certificate(cert.raw))
      }
      const now = Date.now()
      return { clientCA: chainsTo(leaf, candidates, client, now), requestHeaderCA: chainsTo(leaf, candidates, proxy, now) }
    },
  }
}

/** More than any real chain holds; what a client sends beyond it is not looked at. */
const MAX_CHAIN_CERTIFICATES = 8
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0'

/**
 * Whether `cert` may stand in a client's chain: its extended key usages, where it names any, include
 * client authentication. Node gives them as OIDs; Deno's `keyUsage` lists the key usages by name
 * instead, which say nothing of this (the handshake checked the purpose of the chain it built).
 */
function forClientAuth(cert: X509Certificate): boolean {
  const usages = ((cert.keyUsage as string[] | undefined) ?? []).filter((u) => /^\d+(\.\d+)+$/.test(u))
  return usages.length === 0 || usages.includes(CLIENT_AUTH) || usages.includes(ANY_EXTENDED_KEY_USAGE)
}

function validAt(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo)
}

/** `issuer` names `cert`'s issuer, is a CA in force, and its key signed `cert`. */
function signedBy(cert: X509Certificate, issuer: X509Certificate, now: number): boolean {
  return issuer.ca && validAt(issuer, now) && forClientAuth(issuer) && cert.checkIssued(issuer) && cert.verify(issuer.publicKey)
}

/**
 * Whether a path of verified signatures leads from `leaf` through some of
 * the `intermediates` to a certificate of `roots`, as Go's x509.Verify with
 * that pool alone. The leaf itself was checked by the handshake. Breadth
 * first, each intermediate entered once: certificates sharing a key cannot
 * multiply the paths tried.
 */
function chainsTo(leaf: X509Certificate, intermediates: readonly X509Certificate[], roots: readonly X509Certificate[], now: number): boolean {
  if (roots.length === 0 || !forClientAuth(leaf)) return false
  if (roots.some((root) => root.fingerprint256 === leaf.fingerprint256)) return true
  const entered = new Set<X509Certificate>()
  let level = [leaf]
  for (let depth = 0; depth <= MAX_CHAIN_CERTIFICATES && level.length > 0; depth++) {
    const next: X509Certificate[] = []
    for (const cert of level) {
      if (roots.some((root) => signedBy(cert, root, now))) return true
      for (const issuer of intermediates) {
        if (entered.has(issuer) || !signedBy(cert, issuer, now)) continue
        entered.add(issuer)
        next.push(issuer)
      }
    }
    level = next
  }
  return false
}
