/**
 * Creating a CA and signing serving and client certificates with Web Crypto
 * (ECDSA P-256, SHA-256): the "secure by default" set the daemon writes to
 * --cert-dir and the embedding API keeps in memory. Keys are written as
 * PKCS#8 (`PRIVATE KEY`), which Go's tls.X509KeyPair (kubectl, client-go),
 * node:tls, Python's ssl and Web Crypto's importKey all read.
 */
import { pemDecodeAll, pemEncode } from './pem.js'
import { loadX509, type X509 } from './x509.js'

// The DOM lib is not loaded (core targets every runtime); derive the Web Crypto key types from the global.
type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>
interface WebCryptoKeyPair {
  publicKey: WebCryptoKey
  privateKey: WebCryptoKey
}

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const
const DAY_MS = 24 * 60 * 60 * 1000
// Clocks of clients may lag a little behind ours: back-date notBefore.
const CLOCK_SKEW_MS = 5 * 60 * 1000

/** A certificate and its private key, both PEM. */
export interface CertificateKeyPair {
  certificate: string
  privateKey: string
}

export interface CertificateAuthority extends CertificateKeyPair {
  signingKey: WebCryptoKey
  cert: X509.X509Certificate
}

export interface ValidityOptions {
  /** @default new Date() */
  now?: Date
  validityDays?: number
}

export interface CaOptions extends ValidityOptions {
  commonName: string
}

export interface ServingCertificateOptions extends ValidityOptions {
  commonName: string
  dnsNames: string[]
  ipAddresses: string[]
}

export interface ClientCertificateOptions extends ValidityOptions {
  commonName: string
  organizations: string[]
}

/** What reuse decisions need to know about an existing certificate. */
export interface CertificateSummary {
  commonName: string
  organizations: string[]
  issuer: string
  notBefore: Date
  notAfter: Date
  dnsNames: string[]
  ipAddresses: string[]
  isCa: boolean
}

function validity(opts: ValidityOptions, defaultDays: number): { notBefore: Date; notAfter: Date } {
  const now = opts.now ?? new Date()
  return {
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + (opts.validityDays ?? defaultDays) * DAY_MS),
  }
}

/** Positive 127-bit serial: RFC 5280 asks for at most 20 octets and positive values; Go enforces both. */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** Builds a Name from typed parts so values with `,` `=` or `+` need no escaping. Order as openssl prints: O before CN. */
function name(x509: typeof X509, commonName: string, organizations: string[] = []): X509.Name {
  return new x509.Name([...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }])
}

async function generateKeyPair(): Promise<WebCryptoKeyPair> {
  return (await crypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as WebCryptoKeyPair
}

async function exportPrivateKey(key: WebCryptoKey): Promise<string> {
  return pemEncode('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', key))
}

export async function createCertificateAuthority(opts: CaOptions): Promise<CertificateAuthority> {
  const x509 = await loadX509()
  const keys = await generateKeyPair()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: name(x509, opts.commonName),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    ...validity(opts, 3650),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return { cert, signingKey: keys.privateKey, certificate: cert.toString('pem'), privateKey: await exportPrivateKey(keys.privateKey) }
}

/** Reads a CA written by createCertificateAuthority (or any ECDSA P-256 CA with a PKCS#8 key). */
export async function loadCertificateAuthority(pair: CertificateKeyPair): Promise<CertificateAuthority> {
  const certBlock = pemDecodeAll(pair.certificate).find((b) => b.label === 'CERTIFICATE')
  const keyBlock = pemDecodeAll(pair.privateKey).find((b) => b.label === 'PRIVATE KEY')
  if (!certBlock) throw new Error('no CERTIFICATE block in the CA certificate')
  if (!keyBlock) throw new Error('no PKCS#8 "PRIVATE KEY" block in the CA key')
  const x509 = await loadX509()
  const cert = new x509.X509Certificate(certBlock.der)
  const signingKey = await crypto.subtle.importKey('pkcs8', keyBlock.der, KEY_ALGORITHM, true, ['sign'])
  return { cert, signingKey, certificate: pair.certificate, privateKey: pair.privateKey }
}

async function issue(
  x509: typeof X509,
  ca: CertificateAuthority,
  subject: X509.Name,
  opts: ValidityOptions,
  extensions: X509.Extension[],
): Promise<CertificateKeyPair> {
  const keys = await generateKeyPair()
  const { notBefore, notAfter } = validity(opts, 365)
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject,
    issuer: ca.cert.subjectName,
    // A leaf must not outlive its issuer: verifiers reject the chain otherwise.
    notBefore,
    notAfter: new Date(Math.min(notAfter.getTime(), ca.cert.notAfter.getTime())),
    publicKey: keys.publicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      ...extensions,
    ],
  })
  return { certificate: cert.toString('pem'), privateKey: await exportPrivateKey(keys.privateKey) }
}

export async function issueServingCertificate(
  ca: CertificateAuthority,
  opts: ServingCertificateOptions,
): Promise<CertificateKeyPair> {
  const x509 = await loadX509()
  const names: X509.JsonGeneralName[] = [
    ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...opts.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
  ]
  return issue(x509, ca, name(x509, opts.commonName), opts, [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    new x509.SubjectAlternativeNameExtension(names),
  ])
}

/** A client certificate: CN is the user name, each O a group (spec: --client-ca-file). */
export async function issueClientCertificate(
  ca: CertificateAuthority,
  opts: ClientCertificateOptions,
): Promise<CertificateKeyPair> {
  const x509 = await loadX509()
  return issue(x509, ca, name(x509, opts.commonName, opts.organizations), opts, [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
  ])
}

/** The first certificate of a PEM bundle, summarised. */
export async function summarizeCertificate(pem: string): Promise<CertificateSummary> {
  const block = pemDecodeAll(pem).find((b) => b.label === 'CERTIFICATE')
  if (!block) throw new Error('no CERTIFICATE block found')
  const x509 = await loadX509()
  const cert = new x509.X509Certificate(block.der)
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)
  const sanNames = san?.names.toJSON() ?? []
  const basic = cert.getExtension(x509.BasicConstraintsExtension)
  return {
    commonName: cert.subjectName.getField('CN').at(-1) ?? '',
    organizations: cert.subjectName.getField('O'),
    issuer: cert.issuer,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    dnsNames: sanNames.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: sanNames.filter((n) => n.type === 'ip').map((n) => n.value),
    isCa: basic?.ca ?? false,
  }
}

/** True when `certificatePem` was signed by `ca`'s key (signature check only, no chain rules). */
export async function isIssuedBy(certificatePem: string, ca: CertificateAuthority): Promise<boolean> {
  const block = pemDecodeAll(certificatePem).find((b) => b.label === 'CERTIFICATE')
  if (!block) return false
  const x509 = await loadX509()
  const cert = new x509.X509Certificate(block.der)
  if (cert.issuer !== ca.cert.subject) return false
  return cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true })
}

/** Does a PEM bundle contain this exact certificate? (Is our CA among the trusted client CAs?) */
export function bundleContains(bundlePem: string, certificatePem: string): boolean {
  const wanted = pemDecodeAll(certificatePem).find((b) => b.label === 'CERTIFICATE')
  if (!wanted) return false
  const key = wanted.der.join(',')
  return pemDecodeAll(bundlePem).some((b) => b.label === 'CERTIFICATE' && b.der.join(',') === key)
}
