/**
 * An in-memory certificate set for the Bun adapter: a fresh CA and a serving
 * certificate for the loopback names, made with core/pki (Web Crypto). No
 * admin client certificate: Bun cannot show the handler a peer certificate
 * (see serve.ts), so clients authenticate with a token and only need the CA.
 */

export interface BunTlsMaterial {
  key: string
  cert: string
  /** PEM of the CA clients must trust. */
  caCertificate: string
}

export async function generateLoopbackTls(): Promise<BunTlsMaterial> {
  // Dynamic imports, in this order, on purpose: Bun evaluates a CommonJS
  // dependency (@peculiar/x509 -> tsyringe) before the ES module that imports
  // it, so the metadata shim core/pki/x509.ts imports first would come too late.
  await import('../../core/pki/reflect-metadata.js')
  const { createCertificateAuthority, issueServingCertificate } = await import('../../core/pki/certificates.js')
  const ca = await createCertificateAuthority({ commonName: `apiserver-bun-ca@${Math.floor(Date.now() / 1000)}` })
  const serving = await issueServingCertificate(ca, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  })
  return { key: serving.privateKey, cert: serving.certificate, caCertificate: ca.certificate }
}
