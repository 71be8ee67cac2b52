/**
 * A client certificate and key read from the files two flags name, checked
 * at start-up as upstream's tls.X509KeyPair checks them: each PEM parses and
 * the key is the certificate's. Otherwise the pair would be taken and the
 * first connection presenting it would fail, long after the server reported
 * itself ready.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto'

export interface ClientKeyPairFlags {
  /** The flags' names without `--`, for messages. */
  certificate: string
  key: string
}

const hasPem = (text: string, label: RegExp): boolean => new RegExp(`-----BEGIN ${label.source}-----`).test(text)

/** Throws an Error naming the flag whose file is at fault; the messages are tls.X509KeyPair's. */
export function checkClientKeyPair(pair: { certificate: string; key: string }, flags: ClientKeyPairFlags): void {
  if (!hasPem(pair.certificate, /CERTIFICATE/)) {
    const switched = hasPem(pair.certificate, /[A-Z ]*PRIVATE KEY/)
    throw new Error(
      `--${flags.certificate}: ${switched ? 'tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched' : 'tls: failed to find any PEM data in certificate input'}`,
    )
  }
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(pair.certificate)
  } catch {
    throw new Error(`--${flags.certificate}: x509: malformed certificate`)
  }
  if (!hasPem(pair.key, /[A-Z ]*PRIVATE KEY/)) throw new Error(`--${flags.key}: tls: failed to find any PEM data in key input`)
  let key: KeyObject
  try {
    key = createPrivateKey(pair.key)
  } catch {
    throw new Error(`--${flags.key}: tls: failed to parse private key`)
  }
  if (!certificate.checkPrivateKey(key)) throw new Error(`--${flags.key}: tls: private key does not match public key`)
}
