/**
 * The keys of service-account tokens for the daemon: the files of
 * `--service-account-signing-key-file` and `--service-account-key-file`
 * (any PEM form Go reads: PKCS#1, SEC1, PKCS#8, PKIX, certificates),
 * turned into the PKCS#8 and PKIX PEM core reads. Without a signing key,
 * one is made once in --cert-dir (`sa.key`, `sa.pub`, as kubeadm lays them
 * out) so that the daemon issues tokens with no flags; then, as upstream
 * falls back to it, the serving key verifies tokens too.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadSigningKey, loadVerificationKeys } from '../../../core/authn/serviceaccount/keys.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { DaemonFlags } from './flags.js'
import { ensureDir, readIfExists, writePrivate } from './pki.js'

export const SA_KEY_FILE = 'sa.key'
export const SA_PUBLIC_KEY_FILE = 'sa.pub'

export interface ServiceAccountKeyOptions {
  certDir: string
  signingKeyFile?: string
  keyFiles: readonly string[]
  /** The serving key (PEM), a verification key when no key file is given. */
  servingKey: string
  logger: Logger
}

export interface ServiceAccountKeys {
  /** PKCS#8 PEM. */
  signingKey: string
  /** PEM texts of PKIX public keys, one text per source. */
  keys: string[]
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

const asPkcs8 = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString()
const asPkix = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString()

function isSupported(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'ec'
}

/** Every public key of a PEM text, private keys and certificates included; other blocks are an error (but EC PARAMETERS). */
function publicKeysOf(text: string, what: string): string {
  const out: string[] = []
  for (const match of text.matchAll(PEM_BLOCK)) {
    const [block, label] = match
    if (label === 'EC PARAMETERS') continue
    let key: KeyObject
    try {
      key = createPublicKey(block)
    } catch {
      throw new Error(`${what}: data contains no valid public keys`)
    }
    if (!isSupported(key)) throw new Error(`${what}: data does not contain any valid RSA or ECDSA public keys`)
    out.push(asPkix(key))
  }
  if (!out.length) throw new Error(`${what}: data does not contain any valid RSA or ECDSA public keys`)
  return out.join('')
}

function privateKeyOf(text: string, what: string): KeyObject {
  for (const match of text.matchAll(PEM_BLOCK)) {
    try {
      const key = createPrivateKey(match[0])
      if (isSupported(key)) return key
    } catch {
      // not a private key block; look further
    }
  }
  throw new Error(`${what}: data does not contain a valid RSA or ECDSA private key`)
}

async function readFlagFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    throw new Error(`--${flag}: cannot read ${path}: ${(err as Error).message}`)
  }
}

/** `sa.key` in the cert dir, made (ECDSA P-256) when absent. */
async function certDirSigningKey(certDir: string, logger: Logger): Promise<KeyObject> {
  const path = join(certDir, SA_KEY_FILE)
  const existing = await readIfExists(path)
  if (existing !== undefined) return privateKeyOf(existing, path)
  await ensureDir(certDir, logger)
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await writePrivate(path, asPkcs8(privateKey))
  await writePrivate(join(certDir, SA_PUBLIC_KEY_FILE), asPkix(createPublicKey(privateKey)))
  logger.info({ file: path }, 'generated the service account signing key')
  return privateKey
}

/** Reads (or makes) the keys, and checks that core reads them: a bad file stops start-up with its name. */
/** The key options the daemon's flags give: a single daemon and the primary of --workers read them alike. */
export function serviceAccountKeyOptionsOf(
  flags: Pick<DaemonFlags, 'certDir' | 'serviceAccounts'>,
  servingKey: ServiceAccountKeyOptions['servingKey'],
  logger: Logger,
): ServiceAccountKeyOptions {
  return {
    certDir: flags.certDir,
    keyFiles: flags.serviceAccounts.keyFiles,
    ...(flags.serviceAccounts.signingKeyFile ? { signingKeyFile: flags.serviceAccounts.signingKeyFile } : {}),
    servingKey,
    logger,
  }
}

export async function serviceAccountKeys(opts: ServiceAccountKeyOptions): Promise<ServiceAccountKeys> {
  const keyFiles = await Promise.all(
    opts.keyFiles.map(async (path) => publicKeysOf(await readFlagFile(path, 'service-account-key-file'), `--service-account-key-file ${path}`)),
  )
  const signing = opts.signingKeyFile
    ? privateKeyOf(await readFlagFile(opts.signingKeyFile, 'service-account-signing-key-file'), `--service-account-signing-key-file ${opts.signingKeyFile}`)
    : await certDirSigningKey(opts.certDir, opts.logger)
  const keys = [...keyFiles]
  if (!opts.signingKeyFile) {
    // Our own key always verifies what it signs; with no key file, the serving key too (upstream's fallback).
    keys.push(asPkix(createPublicKey(signing)))
    if (!opts.keyFiles.length) {
      try {
        keys.push(publicKeysOf(opts.servingKey, 'the serving key'))
      } catch {
        opts.logger.info({}, 'the serving key is not an RSA or ECDSA key; it does not verify service account tokens')
      }
    }
  }
  const signingKey = asPkcs8(signing)
  await loadSigningKey(signingKey)
  await loadVerificationKeys(keys)
  return { signingKey, keys }
}
