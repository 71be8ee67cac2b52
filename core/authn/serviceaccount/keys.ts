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
import { appendAll } from '../../machinery/append-all.js'

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
// Tried in turn when the DER does not name one of them: Web Crypto needs the algorithm up front, PEM does not say it.
const IMPORT_TRIES = ['RS256', 'ES256', 'ES384', 'ES512'] as const

/** A DER element's tag and where its contents lie; undefined past the end or for a length form keys do not use. */
function derElement(der: Uint8Array, at: number): { tag: number; start: number; end: number } | undefined {
  if (at + 2 > der.length) return undefined
  const tag = der[at]!
  let length = der[at + 1]!
  let start = at + 2
  if (length & 0x80) {
    const octets = length & 0x7f
    if (octets < 1 || octets > 3 || start + octets > der.length) return undefined
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + der[start + i]!
    start += octets
  }
  return start + length <= der.length ? { tag, start, end: start + length } : undefined
}

const hex = (der: Uint8Array, start: number, end: number): string => Array.from(der.subarray(start, end), (b) => b.toString(16).padStart(2, '0')).join('')

/** rsaEncryption, and id-ecPublicKey's curves (prime256v1, secp384r1, secp521r1), by their OIDs' DER contents. */
const RSA_ENCRYPTION = '2a864886f70d010101'
const EC_PUBLIC_KEY = '2a8648ce3d0201'
const CURVE_OIDS: Record<string, SigningAlgorithm> = { '2a8648ce3d030107': 'ES256', '2b81040022': 'ES384', '2b81040023': 'ES512' }

/**
 * The algorithm a PKCS#8 (`PrivateKeyInfo`) or PKIX (`SubjectPublicKeyInfo`)
 * key's AlgorithmIdentifier names, read from its DER; undefined for any
 * other (the import then tries each in turn, and says what it takes).
 * Each failed Web Crypto import costs a parse of the whole key.
 */
export function namedAlgorithm(der: Uint8Array, form: 'pkcs8' | 'spki'): SigningAlgorithm | undefined {
  const outer = derElement(der, 0)
  if (outer?.tag !== 0x30) return undefined
  let at = outer.start
  // PKCS#8 has a version INTEGER before the AlgorithmIdentifier.
  if (form === 'pkcs8') {
    const version = derElement(der, at)
    if (version?.tag !== 0x02) return undefined
    at = version.end
  }
  const identifier = derElement(der, at)
  if (identifier?.tag !== 0x30) return undefined
  const oid = derElement(der, identifier.start)
  if (oid?.tag !== 0x06 || oid.end > identifier.end) return undefined
  const algorithm = hex(der, oid.start, oid.end)
  if (algorithm === RSA_ENCRYPTION) return 'RS256'
  if (algorithm !== EC_PUBLIC_KEY) return undefined
  const curve = derElement(der, oid.end)
  if (curve?.tag !== 0x06 || curve.end > identifier.end) return undefined
  return CURVE_OIDS[hex(der, curve.start, curve.end)]
}

async function importEither(
  der: Uint8Array,
  form: 'pkcs8' | 'spki',
  importer: (pem: string, alg: string, opts: { extractable: boolean }) => Promise<CryptoKey>,
): Promise<{ key: CryptoKey; alg: SigningAlgorithm }> {
  const pem = pemEncode(form === 'pkcs8' ? 'PRIVATE KEY' : 'PUBLIC KEY', der)
  const named = namedAlgorithm(der, form)
  if (named) {
    try {
      return { key: await importer(pem, named, { extractable: true }), alg: named }
    } catch {
      // not what its DER says; try each in turn
    }
  }
  for (const alg of IMPORT_TRIES) {
    if (alg === named) continue
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
  const { key, alg: tried } = await importEither(block.der, 'pkcs8', importPKCS8)
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
      const { key } = block.label === 'PRIVATE KEY' ? await importEither(block.der, 'pkcs8', importPKCS8) : await importEither(block.der, 'spki', importSPKI)
      const jwk = await exportJWK(key)
      found.push(await verificationKey(jwk, algorithmOf(jwk)))
    }
    if (!found.length) throw new Error(`key ${i}: data does not contain any valid RSA or ECDSA public keys`)
    appendAll(keys, found)
  }
  return keys
}

/**
 * A public key handed over as PKIX DER with its key id (an external
 * signer's FetchKeys): the id is the signer's, not computed here.
 */
export async function verificationKeyFromSpki(der: Uint8Array, kid: string): Promise<VerificationKey> {
  const { key } = await importEither(der, 'spki', importSPKI)
  const jwk = await exportJWK(key)
  return verificationKey(jwk, algorithmOf(jwk), kid)
}

/** A fresh ECDSA P-256 signing key as PKCS#8 PEM, for a server given none. */
export async function generateSigningKeyPem(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as { privateKey: CryptoKey }
  return pemEncode('PRIVATE KEY', new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey)))
}
