/**
 * What the two test harnesses that start a `kube-apiserver` binary do around
 * its exec, rewritten here so tests and benchmarks can play them:
 *
 * - envtest (controller-runtime, pkg/internal/testing/controlplane and
 *   process): three tiny ECDSA P-256 CAs (serving, client, service-account
 *   signing), files written into a fresh cert dir, flags as `--name=value`
 *   sorted by name, readiness as an unauthenticated GET /healthz (TLS not
 *   verified) every 100 ms, then the `default` namespace with an admin user
 *   (client certificate, group system:masters) every 50 ms.
 * - kube-api-test (fabric8, grown from jenvtest): self-signed RSA
 *   certificates without CA, one for the server and one for the client that
 *   is also the client CA, the serving key reused as the service-account key,
 *   flags as separate `--name value` words, readiness as GET /readyz with the
 *   client certificate every 200 ms, then `kubectl get ns default`.
 */
import { generateKeyPairSync, webcrypto } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { request } from 'node:https'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { loadX509, type X509 } from '../../core/pki/x509.js'

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' } as const
const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' } as const
const HOUR_MS = 3600_000

type CryptoKeyPair = webcrypto.CryptoKeyPair

interface Pair {
  certificate: string
  privateKey: string
}

const pem = (label: string, der: ArrayBuffer): string =>
  `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`

async function pkcs8(keys: CryptoKeyPair): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))
}

/** Go's pkix.Name order: organizations before the common name. */
function goName(x509: typeof X509, commonName: string, organizations: readonly string[]): X509.Name {
  return new x509.Name([...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }])
}

/** A positive random serial below 2^63, as client-go's NewSelfSignedCACert draws it. */
function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(8))
  bytes[0] = bytes[0]! & 0x7f
  return Buffer.from(bytes).toString('hex')
}

/** envtest's TinyCA: a self-signed CA valid ten years, and leaves numbered from 1 valid one week. */
class TinyCa {
  private nextSerial = 1
  private constructor(
    private readonly x509: typeof X509,
    readonly cert: X509.X509Certificate,
    private readonly keys: CryptoKeyPair,
  ) {}

  static async create(): Promise<TinyCa> {
    const x509 = await loadX509()
    const keys = (await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as CryptoKeyPair
    const now = new Date()
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: goName(x509, 'envtest-environment', ['envtest']),
      keys,
      signingAlgorithm: ECDSA_SHA256,
      notBefore: now,
      notAfter: new Date(now.getTime() + 10 * 365 * 24 * HOUR_MS),
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
        new x509.BasicConstraintsExtension(true, undefined, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'envtest-environment' }]),
      ],
    })
    return new TinyCa(x509, cert, keys)
  }

  async asPair(): Promise<Pair> {
    return { certificate: this.cert.toString('pem'), privateKey: await pkcs8(this.keys) }
  }

  private async leaf(commonName: string, organizations: readonly string[], extensions: X509.Extension[]): Promise<Pair> {
    const x509 = this.x509
    const keys = (await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as CryptoKeyPair
    const now = new Date()
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: (this.nextSerial++).toString(16).padStart(2, '0'),
      subject: goName(x509, commonName, organizations),
      issuer: this.cert.subjectName,
      notBefore: now,
      notAfter: new Date(now.getTime() + 168 * HOUR_MS),
      publicKey: keys.publicKey,
      signingKey: this.keys.privateKey,
      signingAlgorithm: ECDSA_SHA256,
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature, true),
        ...extensions,
        await x509.AuthorityKeyIdentifierExtension.create(this.cert, false),
      ],
    })
    return { certificate: cert.toString('pem'), privateKey: await pkcs8(keys) }
  }

  /** CN localhost; every name given, host names also as the addresses they resolve to. */
  async servingCert(names: readonly string[]): Promise<Pair> {
    const dns: string[] = []
    const ips: string[] = []
    for (const name of names) {
      if (/^[\d.]+$|:/.test(name)) {
        ips.push(name)
        continue
      }
      dns.push(name)
      for (const { address } of await lookup(name, { all: true })) ips.push(address)
    }
    const x509 = this.x509
    return this.leaf('localhost', ['envtest'], [
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([...dns.map((value) => ({ type: 'dns' as const, value })), ...ips.map((value) => ({ type: 'ip' as const, value }))]),
    ])
  }

  clientCert(user: string, groups: readonly string[]): Promise<Pair> {
    return this.leaf(user, groups, [new this.x509.ExtendedKeyUsageExtension([this.x509.ExtendedKeyUsage.clientAuth])])
  }
}

/** Where envtest's server listens and where its store is. */
export interface EnvtestEndpoints {
  address: string
  port: number
  etcdUrl: string
}

export interface EnvtestSetup {
  /** The flags envtest passes, in its order. */
  args: string[]
  /** envtest's admin (`admin`, system:masters) as its kubeconfig: the serving CA, the user's certificate data. */
  kubeconfig: string
  servingCa: string
  admin: Pair
}

/**
 * Writes into `certDir` what envtest writes before the exec (apiserver.crt
 * and .key, sa-signer.crt and .key, client-cert-auth-ca.crt, all 0640), and
 * returns its flags, as envtest renders them for a server whose `--help`
 * does not list `--insecure-port`.
 */
export async function prepareEnvtest(certDir: string, { address, port, etcdUrl }: EnvtestEndpoints): Promise<EnvtestSetup> {
  await mkdir(certDir, { recursive: true, mode: 0o700 })
  const write = async (name: string, text: string) => {
    await writeFile(join(certDir, name), text, { mode: 0o640 })
    await chmod(join(certDir, name), 0o640)
  }
  const servingCa = await TinyCa.create()
  const serving = await servingCa.servingCert(['localhost', address])
  await write('apiserver.crt', serving.certificate)
  await write('apiserver.key', serving.privateKey)
  const saSigner = await (await TinyCa.create()).asPair()
  await write('sa-signer.crt', saSigner.certificate)
  await write('sa-signer.key', saSigner.privateKey)
  const clientCa = await TinyCa.create()
  await write('client-cert-auth-ca.crt', clientCa.cert.toString('pem'))

  const secureUrl = `https://${address}:${port}`
  const flags: Record<string, string> = {
    'allow-privileged': 'true',
    'authorization-mode': 'RBAC',
    'bind-address': address,
    'cert-dir': certDir,
    'client-ca-file': join(certDir, 'client-cert-auth-ca.crt'),
    'disable-admission-plugins': 'ServiceAccount',
    'etcd-servers': etcdUrl,
    'secure-port': String(port),
    'service-account-issuer': `${secureUrl}/`,
    'service-account-key-file': join(certDir, 'sa-signer.crt'),
    'service-account-signing-key-file': join(certDir, 'sa-signer.key'),
    'service-cluster-ip-range': '10.0.0.0/24',
  }
  const args = Object.keys(flags)
    .sort()
    .map((name) => `--${name}=${flags[name]}`)

  const admin = await clientCa.clientCert('admin', ['system:masters'])
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'envtest', cluster: { server: secureUrl, 'certificate-authority-data': b64(servingCa.cert.toString('pem')) } }],
    users: [{ name: 'envtest', user: { 'client-certificate-data': b64(admin.certificate), 'client-key-data': b64(admin.privateKey) } }],
    contexts: [{ name: 'envtest', context: { cluster: 'envtest', user: 'envtest' } }],
    'current-context': 'envtest',
    preferences: {},
  })
  return { args, kubeconfig, servingCa: servingCa.cert.toString('pem'), admin }
}

/** envtest's test for a flag in `--help`: a line starting with the flag (process.State.CheckFlag). */
export function helpListsFlag(help: string, flag: string): boolean {
  return new RegExp(`^\\s*--${flag}\\b`, 'm').test(help)
}

/** kube-api-test's certificates: self-signed RSA (SHA256withRSA), serial the epoch milliseconds, a year, only a SAN extension when names are given. */
async function selfSignedRsa(subject: Array<Record<string, string[]>>, names: X509.JsonGeneralName[]): Promise<Pair> {
  const x509 = await loadX509()
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const
  const keys: CryptoKeyPair = {
    privateKey: await webcrypto.subtle.importKey('pkcs8', rsa.privateKey.export({ type: 'pkcs8', format: 'der' }), algorithm, true, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', rsa.publicKey.export({ type: 'spki', format: 'der' }), algorithm, true, ['verify']),
  }
  const now = new Date()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Date.now().toString(16).padStart(12, '0'),
    name: new x509.Name(subject),
    keys,
    signingAlgorithm: algorithm,
    notBefore: now,
    notAfter: new Date(now.getTime() + 365 * 24 * HOUR_MS),
    extensions: names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  })
  // BouncyCastle's JcaPEMWriter writes a Java RSA private key as PKCS#1.
  return { certificate: cert.toString('pem'), privateKey: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() }
}

export interface KubeApiTestSetup {
  /** The flags kube-api-test passes after the user's `apiServerFlags`. */
  args: string[]
  files: { serverCert: string; serverKey: string; clientCert: string; clientKey: string }
}

/**
 * Writes kube-api-test's four files into its directory (apiserver.crt and
 * .key, client.crt and .key) and returns the flags it passes for a server
 * port and an etcd port (it names etcd as http://0.0.0.0:<port>).
 */
export async function prepareKubeApiTest(dir: string, port: number, etcdPort: number): Promise<KubeApiTestSetup> {
  await mkdir(dir, { recursive: true })
  const files = {
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
  }
  const dns = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster', 'kubernetes.default.svc.cluster.local']
  const server = await selfSignedRsa([{ CN: ['example.org'] }], [{ type: 'ip', value: '127.0.0.1' }, ...dns.map((value) => ({ type: 'dns' as const, value }))])
  const client = await selfSignedRsa([{ O: ['system:masters'] }, { CN: ['kubeapitest'] }], [])
  await writeFile(files.serverKey, server.privateKey)
  await writeFile(files.serverCert, server.certificate)
  await writeFile(files.clientKey, client.privateKey)
  await writeFile(files.clientCert, client.certificate)
  const args = [
    '--cert-dir', dir,
    '--secure-port', String(port),
    '--etcd-servers', `http://0.0.0.0:${etcdPort}`,
    '--authorization-mode', 'RBAC',
    '--service-account-issuer', 'https://localhost',
    '--service-account-signing-key-file', files.serverKey,
    '--service-account-signing-key-file', files.serverKey,
    '--service-account-key-file', files.serverKey,
    '--service-account-issuer', files.serverCert,
    '--disable-admission-plugins', 'ServiceAccount',
    '--client-ca-file', files.clientCert,
    '--service-cluster-ip-range', '10.0.0.0/24',
    '--allow-privileged',
  ]
  return { args, files }
}

/** One GET over HTTP/1.1 without verifying the server, as both harnesses probe; the status, or 0 when nothing answered. */
export function probe(url: string, client?: { cert: string; key: string }): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 5000, ...(client ?? {}) }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', () => resolve(0))
    req.end()
  })
}
