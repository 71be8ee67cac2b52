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
 *
 * A verdict is for one moment and one pair of bundles: upstream verifies the
 * peer's chain on every request, against the bundles of the moment. Each
 * verdict says until when it holds, so that a listener can keep it for a
 * connection's next requests and verify again once that time has passed
 * (connection-identity.ts).
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

/** A client's certificates as its handshake left them, parsed once per connection. */
export interface PresentedChain {
  leaf: X509Certificate
  /** The certificates the client sent and those OpenSSL looked up: candidates for the links, none trusted for itself. */
  candidates: readonly X509Certificate[]
}

export function presentedChain(peer: DetailedPeerCertificate): PresentedChain {
  const candidates: X509Certificate[] = []
  const seen = new Set<string>([peer.fingerprint256])
  for (let cert = peer.issuerCertificate; cert?.raw && !seen.has(cert.fingerprint256); cert = cert.issuerCertificate) {
    seen.add(cert.fingerprint256)
    if (candidates.length < MAX_CHAIN_CERTIFICATES) candidates.push(new X509Certificate(cert.raw))
  }
  return { leaf: new X509Certificate(peer.raw), candidates }
}

export interface ChainVerdict {
  /** A path of verified signatures leads to `--client-ca-file`. */
  clientCA: boolean
  /** A path of verified signatures leads to `--requestheader-client-ca-file`. */
  requestHeaderCA: boolean
  /** Why the leaf itself is refused at that moment (expired, not yet valid), in Go's x509 words. */
  leafInvalid?: string
  /** The last moment (ms since the epoch) the verdict holds: past it a certificate it relied on has expired. */
  holdsUntil: number
}

export interface ClientCAs {
  /** Both bundles joined, for the TLS layer's `ca` option; undefined when there is no client CA at all. */
  readonly tlsBundle: string | undefined
  /** Which bundles a chain ends in at `now` (ms since the epoch). */
  verify(chain: PresentedChain, now: number): ChainVerdict
}

export function clientCAs(bundles: ClientCABundles): ClientCAs {
  const client = bundles.clientCA ? parseBundle(bundles.clientCA, '--client-ca-file') : []
  const proxy = bundles.requestHeaderCA ? parseBundle(bundles.requestHeaderCA, '--requestheader-client-ca-file') : []
  // Re-encoded one by one: a bundle whose last line lacks its newline would otherwise merge with the next.
  const all = [...client, ...proxy]
  return {
    tlsBundle: all.length > 0 ? all.map((c) => c.toString()).join('') : undefined,
    verify({ leaf, candidates }, now) {
      const leafInvalid = leafValidityError(leaf, now)
      if (leafInvalid) {
        // Expired stays expired; one not yet valid is looked at again when it becomes valid.
        const notBefore = Date.parse(leaf.validFrom)
        return { clientCA: false, requestHeaderCA: false, leafInvalid, holdsUntil: now < notBefore ? notBefore - 1 : Infinity }
      }
      const clientUntil = chainsTo(leaf, candidates, client, now)
      const proxyUntil = chainsTo(leaf, candidates, proxy, now)
      return {
        clientCA: clientUntil !== undefined,
        requestHeaderCA: proxyUntil !== undefined,
        holdsUntil: Math.min(clientUntil ?? Infinity, proxyUntil ?? Infinity),
      }
    },
  }
}

/** Go's x509 time format (RFC 3339, whole seconds). */
function goTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Why `leaf` is not valid at `now`, as Go's x509.Verify says it; undefined while it is. */
function leafValidityError(leaf: X509Certificate, now: number): string | undefined {
  const notBefore = Date.parse(leaf.validFrom)
  const notAfter = Date.parse(leaf.validTo)
  if (now < notBefore) return `x509: certificate has expired or is not yet valid: current time ${goTime(now)} is before ${goTime(notBefore)}`
  if (now > notAfter) return `x509: certificate has expired or is not yet valid: current time ${goTime(now)} is after ${goTime(notAfter)}`
  return undefined
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
 * that pool alone: the moment the path found stops holding (the earliest
 * notAfter on it), or undefined when there is none. The leaf's own validity
 * period is the caller's to check. Breadth first, each intermediate entered
 * once: certificates sharing a key cannot multiply the paths tried.
 */
function chainsTo(leaf: X509Certificate, intermediates: readonly X509Certificate[], roots: readonly X509Certificate[], now: number): number | undefined {
  if (roots.length === 0 || !forClientAuth(leaf)) return undefined
  const leafUntil = Date.parse(leaf.validTo)
  if (roots.some((root) => root.fingerprint256 === leaf.fingerprint256)) return leafUntil
  const entered = new Set<X509Certificate>()
  // Each certificate reached, with the earliest notAfter on the path that reached it.
  let level = [{ cert: leaf, until: leafUntil }]
  for (let depth = 0; depth <= MAX_CHAIN_CERTIFICATES && level.length > 0; depth++) {
    const next: typeof level = []
    for (const { cert, until } of level) {
      const root = roots.find((r) => signedBy(cert, r, now))
      if (root) return Math.min(until, Date.parse(root.validTo))
      for (const issuer of intermediates) {
        if (entered.has(issuer) || !signedBy(cert, issuer, now)) continue
        entered.add(issuer)
        next.push({ cert: issuer, until: Math.min(until, Date.parse(issuer.validTo)) })
      }
    }
    level = next
  }
  return undefined
}
