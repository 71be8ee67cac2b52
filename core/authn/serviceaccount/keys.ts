/**
 * The keys of service-account tokens: the one that signs and the ones that
 * verify (`--service-account-signing-key-file`, `--service-account-key-file`),
 * read from PEM with Web Crypto. As upstream: RSA keys sign RS256, ECDSA keys
 * the ES algorithm of their curve, and a key's id (`kid`) is the unpadded
 * base64url SHA-256 of its public key in PKIX DER form.
 */
import { exportJWK, importJWK, importPKCS8, importSPKI, type CryptoKey, type JWK } from 'jose'
import { base64UrlEncode } from '../../machinery/base64.js'
import { pemDecodeAll, pemEncode } from '../../pki/pem.js'

/** What a key signs with: RS256 for RSA, ES256/384/512 by ECDSA curve (upstream's only choices). */
export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512'

/** A public key that verifies tokens, as the JWKS and the verifier need it. */
export interface VerificationKey {
  readonly kid: string
  /** The algorithm the key signs with, named in discovery. */
  readonly alg: SigningAlgorithm
  /** The public JWK, without `alg`, `kid` or `use`. */
  readonly jwk: JWK
  /** The key as Web Crypto needs it for `alg`; undefined when the key cannot verify that algorithm. */
  verifierFor(alg: string): Promise<CryptoKey> | undefined
}

export interface SigningKey {
  readonly kid: string
  readonly alg: SigningAlgorithm
  readonly privateKey: CryptoKey
  readonly publicKey: VerificationKey
}

// A JWS with an RSA key may use any RSA signature (go-jose accepts them all); ECDSA only its curve's.
const RSA_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
const CURVE_ALGS: Record<string, SigningAlgorithm> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }
// Tried in turn: Web Crypto needs the algorithm up front, PEM does not say it.
const IMPORT_TRIES = ['RS256', 'ES256', 'ES384', 'ES512'] as const

async function importEither(
  pem: string,
  importer: (pem: string, alg: string, opts: { extractable: boolean }) => Promise<CryptoKey>,
): Promise<{ key: CryptoKey; alg: SigningAlgorithm }> {
  for (const alg of IMPORT_TRIES) {
    try {
      return { key: await importer(pem, alg, { extractable: true }), alg }
    } catch {
      // not this kind of key; try the next
    }
  }
  throw new Error('not an RSA or ECDSA (P-256, P-384, P-521) key')
}

/** Only the public members of a JWK, in no particular order. */
function publicMembers(jwk: JWK): JWK {
  if (jwk.kty === 'RSA') return { kty: 'RSA', n: jwk.n ?? '', e: jwk.e ?? '' }
  return { kty: 'EC', crv: jwk.crv ?? '', x: jwk.x ?? '', y: jwk.y ?? '' }
}

async function keyIdOf(publicKey: CryptoKey): Promise<string> {
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', publicKey))
  return base64UrlEncode(new Uint8Array(await crypto.subtle.digest('SHA-256', spki)))
}

async function verificationKey(jwk: JWK, alg: SigningAlgorithm, givenKid?: string): Promise<VerificationKey> {
  const pub = publicMembers(jwk)
  const kid = givenKid ?? (await keyIdOf((await importJWK(pub, alg, { extractable: true })) as CryptoKey))
  const allowed = pub.kty === 'RSA' ? RSA_ALGS : [alg]
  const byAlg = new Map<string, Promise<CryptoKey>>()
  return {
    kid,
    alg,
    jwk: pub,
    verifierFor(wanted) {
      if (!allowed.includes(wanted)) return undefined
      let key = byAlg.get(wanted)
      if (!key) {
        key = importJWK(pub, wanted) as Promise<CryptoKey>
        byAlg.set(wanted, key)
      }
      return key
    },
  }
}

function algorithmOf(jwk: JWK): SigningAlgorithm {
  if (jwk.kty === 'RSA') return 'RS256'
  const alg = CURVE_ALGS[jwk.crv ?? '']
  if (!alg) throw new Error(`unknown private key curve ${jwk.crv ?? ''}, must be 256, 384, or 521`)
  return alg
}

/** The signing key from PEM (PKCS#8 `PRIVATE KEY`): the first private key in the text. */
export async function loadSigningKey(pem: string): Promise<SigningKey> {
  const block = pemDecodeAll(pem).find((b) => b.label === 'PRIVATE KEY')
  if (!block) throw new Error('no PKCS#8 "PRIVATE KEY" block found')
  const { key, alg: tried } = await importEither(pemEncode('PRIVATE KEY', block.der), importPKCS8)
  const jwk = await exportJWK(key)
  const alg = algorithmOf(jwk)
  // Re-import under the curve's own algorithm: a P-384 key must sign ES384.
  const privateKey = alg === tried ? key : await importPKCS8(pemEncode('PRIVATE KEY', block.der), alg)
  const publicKey = await verificationKey(jwk, alg)
  return { kid: publicKey.kid, alg, privateKey, publicKey }
}

/**
 * Every key in the PEM texts, as public keys: `PUBLIC KEY` (PKIX) blocks and
 * the public half of `PRIVATE KEY` (PKCS#8) blocks. A text with none is an error.
 */
export async function loadVerificationKeys(pems: readonly string[]): Promise<VerificationKey[]> {
  const keys: VerificationKey[] = []
  for (const [i, pem] of pems.entries()) {
    const found: VerificationKey[] = []
    for (const block of pemDecodeAll(pem)) {
      if (block.label !== 'PRIVATE KEY' && block.label !== 'PUBLIC KEY') continue
      const importer = block.label === 'PRIVATE KEY' ? importPKCS8 : importSPKI
      const { key } = await importEither(pemEncode(block.label, block.der), importer)
      const jwk = await exportJWK(key)
      found.push(await verificationKey(jwk, algorithmOf(jwk)))
    }
    if (!found.length) throw new Error(`key ${i}: data does not contain any valid RSA or ECDSA public keys`)
    keys.push(...found)
  }
  return keys
}

/**
 * A public key handed over as PKIX DER with its key id (an external
 * signer's FetchKeys): the id is the signer's, not computed here.
 */
export async function verificationKeyFromSpki(der: Uint8Array, kid: string): Promise<VerificationKey> {
  const { key } = await importEither(pemEncode('PUBLIC KEY', der), importSPKI)
  const jwk = await exportJWK(key)
  return verificationKey(jwk, algorithmOf(jwk), kid)
}

/** A fresh ECDSA P-256 signing key as PKCS#8 PEM, for a server given none. */
export async function generateSigningKeyPem(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as { privateKey: CryptoKey }
  return pemEncode('PRIVATE KEY', new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey)))
}
