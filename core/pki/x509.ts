/**
 * The one door to @peculiar/x509: load it through here, never import it
 * directly. It needs the metadata shim installed before it is evaluated, and
 * a static import cannot promise that everywhere (Bun evaluates a CommonJS
 * dependency before the ES modules imported ahead of it), so it is loaded
 * on first use. That also keeps it off the start-up path of servers that
 * never create a certificate.
 */
import './reflect-metadata.js'
import type * as X509 from '@peculiar/x509'

export type { X509 }

let loading: Promise<typeof X509> | undefined

export function loadX509(): Promise<typeof X509> {
  loading ??= import('@peculiar/x509').then((x509) => {
    // Sign with this runtime's own Web Crypto.
    x509.cryptoProvider.set(globalThis.crypto)
    return x509
  })
  return loading
}
