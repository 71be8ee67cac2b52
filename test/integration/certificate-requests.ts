/** Real PKCS#10 requests for tests: the server parses them and checks their signature, as upstream does. */
import { loadX509 } from '../../core/pki/x509.js'

/** A fresh ECDSA P-256 request for `subject` (`CN=app, O=dev`), its PEM text. */
export async function requestPemText(subject: string): Promise<string> {
  const x509 = await loadX509()
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  type Keys = Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0]['keys']
  const keys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as Keys
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: algorithm })
  return csr.toString('pem')
}

/** The same as spec.request carries it: base64 of the PEM. */
export async function csrPem(subject: string): Promise<string> {
  return btoa(await requestPemText(subject))
}
