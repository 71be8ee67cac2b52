/**
 * "Secure by default, usable at once" (as k3s does it): without
 * --tls-cert-file/--tls-private-key-file or --client-ca-file the daemon
 * creates, under --cert-dir, a CA, a serving certificate it signs, an admin
 * client certificate and admin.kubeconfig. Later starts reuse the files,
 * re-issuing a leaf only when it is about to expire, no longer covers the
 * addresses, or was not signed by the CA in the directory.
 *
 * A serving pair found in --cert-dir that no CA of ours issued is the
 * user's (test harnesses such as envtest write their own apiserver.crt and
 * apiserver.key there): as upstream, it is served unchanged and never
 * rewritten.
 *
 * Files are 0600 in a 0700 directory; every write goes through a temporary
 * file and a rename so a crash never leaves half a key behind.
 */
import { constants } from 'node:fs'
import { access, chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { hostname as osHostname } from 'node:os'
import { join } from 'node:path'
import {
  bundleContains,
  type CertificateAuthority,
  type CertificateKeyPair,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  loadCertificateAuthority,
} from '../../../core/pki/certificates.js'
import { buildKubeconfig } from '../../../core/pki/kubeconfig.js'
import type { Logger } from '../../../core/logging/logger.js'
import { checkCertDirCa, isIssuedByCertDirCa, leafStaleness } from './cert-check.js'
import type { DaemonFlags } from './flags.js'

/** The common names of the CAs the daemon creates start so: how a serving pair in the cert dir is told from one the user put there. */
export const CERT_DIR_CA_PREFIX = 'apiserver-ca@'

export const ADMIN_USER = { commonName: 'kubernetes-admin', organizations: ['system:masters'] }

export const FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  servingCert: 'apiserver.crt',
  servingKey: 'apiserver.key',
  adminCert: 'admin.crt',
  adminKey: 'admin.key',
  kubeconfig: 'admin.kubeconfig',
} as const

export interface PkiOptions {
  certDir: string
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  clientCaFile?: string
  bindAddress: string
  advertiseAddress?: string
  /** @default os.hostname() */
  hostname?: string
  logger: Logger
  /** @default new Date() */
  now?: Date
}

export interface Pki {
  /** PEM key and certificate the listener serves. */
  serving: CertificateKeyPair
  /** PEM bundle client certificates are verified against. */
  clientCA: string
  /** PEM bundle that verifies the serving certificate: the kubeconfig's CA, and what `kube-root-ca.crt` publishes. */
  servingCA: string
  /**
   * Writes `<cert-dir>/admin.kubeconfig` for the server URL actually bound
   * (rewritten only when its content changes, e.g. the port). Returns its
   * path, or undefined when no admin credential exists: the client CA is
   * the user's and its key is not ours.
   */
  writeKubeconfig(server: string): Promise<string | undefined>
}

function isUnspecified(ip: string | undefined): boolean {
  return ip === undefined || ip === '' || ip === '0.0.0.0' || ip === '::'
}

/** The names a generated serving certificate carries (upstream's self-signed set plus the loopbacks). */
export function servingNames(opts: Pick<PkiOptions, 'bindAddress' | 'advertiseAddress' | 'hostname'>): {
  dnsNames: string[]
  ipAddresses: string[]
} {
  const dnsNames = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']
  const host = (opts.hostname ?? osHostname()).toLowerCase()
  // A hostname that is not a DNS name (say, with `_`) would make Go reject the certificate.
  if (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(host) && !dnsNames.includes(host)) {
    dnsNames.push(host)
  }
  const ipAddresses = ['127.0.0.1', '::1']
  for (const ip of [opts.bindAddress, opts.advertiseAddress]) {
    if (ip !== undefined && !isUnspecified(ip) && !ipAddresses.includes(ip)) ipAddresses.push(ip)
  }
  return { dnsNames, ipAddresses }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, constants.F_OK)
    return true
  } catch {
    return false
  }
}

export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

export async function writePrivate(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`
  await writeFile(tmp, text, { mode: 0o600 })
  await chmod(tmp, 0o600) // mode is masked by umask; be explicit
  await rename(tmp, path)
}

export async function ensureDir(dir: string, logger: Logger): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: 0o700 })
  if (created === undefined) {
    const mode = (await stat(dir)).mode & 0o777
    if (mode & 0o077) logger.warn({ certDir: dir, mode: mode.toString(8) }, 'the cert directory is readable by other users; keys in it are 0600')
  } else {
    await chmod(dir, 0o700)
  }
}

/** Reads a pair from the directory, or undefined when either file is missing. */
async function readPair(dir: string, certFile: string, keyFile: string): Promise<CertificateKeyPair | undefined> {
  const [certificate, privateKey] = await Promise.all([readIfExists(join(dir, certFile)), readIfExists(join(dir, keyFile))])
  return certificate !== undefined && privateKey !== undefined ? { certificate, privateKey } : undefined
}

async function writePair(dir: string, certFile: string, keyFile: string, pair: CertificateKeyPair): Promise<void> {
  // Key first: a certificate without its key on disk would look reusable.
  await writePrivate(join(dir, keyFile), pair.privateKey)
  await writePrivate(join(dir, certFile), pair.certificate)
}

/** The cert dir's CA: its PEM, and the CA as issuing needs it, loaded on first use (a restart that reuses every certificate does not). */
interface CaHandle {
  certificate: string
  authority(): Promise<CertificateAuthority>
}

/** Loads the CA from the cert dir, creating it when `create` and absent. */
async function certDirCa(opts: PkiOptions, create: boolean): Promise<CaHandle | undefined> {
  const dir = opts.certDir
  const pair = await readPair(dir, FILES.caCert, FILES.caKey)
  if (pair) {
    const { notAfter } = await checkCertDirCa(pair).catch((err: Error) => {
      throw new Error(`${join(dir, FILES.caCert)}: cannot load the CA: ${err.message}`)
    })
    if (notAfter.getTime() <= (opts.now ?? new Date()).getTime()) {
      throw new Error(`${join(dir, FILES.caCert)} expired on ${notAfter.toISOString()}; remove ${dir} to start over with a new CA`)
    }
    let loaded: Promise<CertificateAuthority> | undefined
    return {
      certificate: pair.certificate,
      authority: () =>
        (loaded ??= loadCertificateAuthority(pair).catch((err: Error) => {
          throw new Error(`${join(dir, FILES.caCert)}: cannot load the CA: ${err.message}`)
        })),
    }
  }
  if (!create) return undefined
  if ((await exists(join(dir, FILES.caCert))) || (await exists(join(dir, FILES.caKey)))) {
    throw new Error(`${dir} holds only one of ${FILES.caCert} and ${FILES.caKey}; restore the other or remove both`)
  }
  const ca = await createCertificateAuthority({ commonName: `${CERT_DIR_CA_PREFIX}${Math.floor(Date.now() / 1000)}`, ...(opts.now ? { now: opts.now } : {}) })
  await writePair(dir, FILES.caCert, FILES.caKey, ca)
  opts.logger.info({ file: join(dir, FILES.caCert) }, 'generated a new certificate authority')
  return { certificate: ca.certificate, authority: () => Promise.resolve(ca) }
}

async function ensureLeaf(
  opts: PkiOptions,
  ca: CaHandle,
  files: { cert: string; key: string },
  names: { dnsNames: string[]; ipAddresses: string[] } | undefined,
  issue: () => Promise<CertificateKeyPair>,
): Promise<CertificateKeyPair> {
  const now = opts.now ?? new Date()
  const existing = await readPair(opts.certDir, files.cert, files.key)
  const why = existing ? leafStaleness(existing, ca.certificate, now, names) : 'missing'
  if (existing && why === undefined) return existing
  const pair = await issue()
  await writePair(opts.certDir, files.cert, files.key, pair)
  opts.logger.info({ file: join(opts.certDir, files.cert), reason: why }, 'issued a certificate')
  return pair
}

async function readUserFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    throw new Error(`--${flag}: cannot read ${path}: ${(err as Error).message}`)
  }
}

/** The pair of --tls-cert-file and --tls-private-key-file, else one in the cert dir that no CA of ours issued. */
async function userServingPair(opts: PkiOptions): Promise<CertificateKeyPair | undefined> {
  if (opts.tlsCertFile && opts.tlsPrivateKeyFile) {
    return {
      certificate: await readUserFile(opts.tlsCertFile, 'tls-cert-file'),
      privateKey: await readUserFile(opts.tlsPrivateKeyFile, 'tls-private-key-file'),
    }
  }
  const inCertDir = await readPair(opts.certDir, FILES.servingCert, FILES.servingKey)
  if (!inCertDir || isIssuedByCertDirCa(inCertDir.certificate, CERT_DIR_CA_PREFIX)) return undefined
  opts.logger.info({ file: join(opts.certDir, FILES.servingCert) }, 'serving the certificate found in the cert dir as it is: no CA of ours issued it')
  return inCertDir
}

/** The PKI options the daemon's flags give: a single daemon and the primary of --workers read them alike. */
export function pkiOptionsOf(
  flags: Pick<DaemonFlags, 'certDir' | 'bindAddress' | 'advertiseAddress' | 'tlsCertFile' | 'tlsPrivateKeyFile' | 'clientCaFile'>,
  logger: Logger,
): PkiOptions {
  return {
    certDir: flags.certDir,
    bindAddress: flags.bindAddress,
    ...(flags.advertiseAddress ? { advertiseAddress: flags.advertiseAddress } : {}),
    ...(flags.tlsCertFile && flags.tlsPrivateKeyFile ? { tlsCertFile: flags.tlsCertFile, tlsPrivateKeyFile: flags.tlsPrivateKeyFile } : {}),
    ...(flags.clientCaFile ? { clientCaFile: flags.clientCaFile } : {}),
    logger,
  }
}

export async function preparePki(opts: PkiOptions): Promise<Pki> {
  const userServing = await userServingPair(opts)
  const userClientCA = opts.clientCaFile ? await readUserFile(opts.clientCaFile, 'client-ca-file') : undefined

  // Our CA is needed for whatever the user did not bring; when they brought
  // both, an existing one is still used to mint the admin credential if the
  // user's client CA bundle trusts it.
  const needOwnCa = !userServing || !userClientCA
  if (needOwnCa) await ensureDir(opts.certDir, opts.logger)
  const ca = await certDirCa(opts, needOwnCa)

  let serving: CertificateKeyPair
  if (userServing) {
    serving = userServing
  } else {
    if (!ca) throw new Error('unreachable: no CA for the serving certificate')
    const names = servingNames(opts)
    serving = await ensureLeaf(opts, ca, { cert: FILES.servingCert, key: FILES.servingKey }, names, async () =>
      issueServingCertificate(await ca.authority(), { commonName: 'kube-apiserver', ...names, ...(opts.now ? { now: opts.now } : {}) }),
    )
  }

  const clientCA = userClientCA ?? ca?.certificate
  if (clientCA === undefined) throw new Error('unreachable: no client CA')

  const canMintAdmin = ca !== undefined && bundleContains(clientCA, ca.certificate)
  if (userClientCA && !canMintAdmin) {
    opts.logger.info({ clientCaFile: opts.clientCaFile }, 'client certificates are verified against --client-ca-file; no admin kubeconfig is generated (its CA key is not in --cert-dir)')
  }
  let admin: CertificateKeyPair | undefined
  if (canMintAdmin && ca) {
    admin = await ensureLeaf(opts, ca, { cert: FILES.adminCert, key: FILES.adminKey }, undefined, async () =>
      issueClientCertificate(await ca.authority(), { ...ADMIN_USER, ...(opts.now ? { now: opts.now } : {}) }),
    )
  }
  // A kubeconfig must trust whatever signed the serving certificate. For a
  // user's certificate that is unknown; its own bundle works with Go clients,
  // which accept a server certificate found in the trusted pool itself.
  const serverTrust = userServing ? userServing.certificate : (ca?.certificate ?? '')

  return {
    serving,
    clientCA,
    servingCA: serverTrust,
    async writeKubeconfig(server) {
      if (!admin) return undefined
      const path = join(opts.certDir, FILES.kubeconfig)
      const text = buildKubeconfig({ server, certificateAuthority: serverTrust, clientCertificate: admin.certificate, clientKey: admin.privateKey })
      if ((await readIfExists(path)) !== text) {
        await writePrivate(path, text)
        opts.logger.info({ file: path, server }, 'wrote the admin kubeconfig')
      }
      return path
    },
  }
}
