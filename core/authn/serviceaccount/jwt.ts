/**
 * Signing and verifying service-account JWTs, as upstream's
 * pkg/serviceaccount/jwt.go: a token is looked at only when its (unverified)
 * issuer is one of ours; then its signature must verify with a key of the
 * key id it names (any key when it names none), its verified issuer must be
 * ours, its audiences must meet the ones asked for, and the validator
 * decides the rest (expiry, the objects it is bound to).
 */
import { CompactSign, compactVerify, decodeProtectedHeader } from 'jose'
import { base64UrlDecode } from '../../machinery/base64.js'
import { isPlainObject, type UserInfo } from '../../machinery/object.js'
import type { AuthNotes } from '../authenticator.js'
import type { TokenAuthenticator, TokenAuthResult } from '../bearer-token.js'
import { readTokenClaims, sortedJson, type TokenClaims } from './claims.js'
import type { PublicKeySet } from './key-set.js'
import { secretDigest } from '../constant-time.js'
import { deepFreeze } from '../../storage/objects.js'
import type { SigningKey, VerificationKey } from './keys.js'
import { intersectAudiences } from '../audiences.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Signs claims with the key, naming its key id, as upstream's JWTTokenGenerator (no `typ` header). */
export async function signToken(key: SigningKey, claims: TokenClaims): Promise<string> {
  return new CompactSign(encoder.encode(sortedJson(claims))).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey)
}

/**
 * Decides, once signature and issuer are verified, who the token stands for,
 * or why it stands for nobody; `notes` takes the request's audit annotations and warnings.
 */
export type TokenValidator = (token: string, claims: TokenClaims, payload: Record<string, unknown>, notes?: AuthNotes) => Promise<UserInfo | { error: string }>

export interface JwtAuthenticatorConfig {
  issuers: readonly string[]
  /** The keys that verify; an external signer's may be fetched again for an unknown key id. */
  keys: PublicKeySet
  /** The API audiences: what a token without `aud` is taken to be for, and what is asked when nothing else is. */
  implicitAudiences: readonly string[]
  validate: TokenValidator
  /** Counts a token without audiences (a legacy one) whose signature verified, checked further or not (`serviceaccount_legacy_tokens_total`). */
  countLegacyToken?: () => void
}

/** The unverified `iss` of a compact JWS, or undefined when it is not one. */
function unverifiedIssuer(token: string): string | undefined {
  if (token.trim().startsWith('{')) return undefined
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const payload: unknown = JSON.parse(decoder.decode(base64UrlDecode(parts[1] ?? '')))
    return isPlainObject(payload) && typeof payload['iss'] === 'string' ? payload['iss'] : undefined
  } catch {
    return undefined
  }
}

/** Go's %q of a string list: ["a" "b"]. */
function quotedList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`
}

/** Tokens whose signature was verified, kept at once; past it the oldest are forgotten (and verified again when seen). */
const MAX_VERIFIED_SIGNATURES = 10_000

/**
 * The payloads of tokens whose signature verified, by the token's digest,
 * with the key that verified it: a client sends its token with every
 * request, and a signature check (a Web Crypto job) cost more than the
 * rest of a GET. Only the signature is remembered: the claims, the expiry
 * and the objects a token is bound to are checked on every request, so a
 * deleted service account or pod refuses its token at once. A remembered
 * signature counts only while its key is still among the token's key id's.
 */
class VerifiedSignatures {
  private readonly verified = new Map<string, { key: VerificationKey; payload: Readonly<Record<string, unknown>> }>()

  get(digest: string, candidates: readonly VerificationKey[]): Readonly<Record<string, unknown>> | undefined {
    const entry = this.verified.get(digest)
    return entry && candidates.includes(entry.key) ? entry.payload : undefined
  }

  set(digest: string, key: VerificationKey, payload: Readonly<Record<string, unknown>>): void {
    this.verified.delete(digest)
    this.verified.set(digest, { key, payload })
    if (this.verified.size > MAX_VERIFIED_SIGNATURES) this.verified.delete(this.verified.keys().next().value!)
  }
}

async function verifiedPayload(
  token: string,
  keys: PublicKeySet,
  remembered: VerifiedSignatures,
): Promise<{ payload: Readonly<Record<string, unknown>> } | { error: string }> {
  let header: { alg?: string; kid?: string }
  try {
    header = decodeProtectedHeader(token)
  } catch {
    return { error: 'malformed token header' }
  }
  const kid = typeof header.kid === 'string' ? header.kid : ''
  const candidates = await keys.keysFor(kid)
  if (!candidates.length) return { error: 'invalid signature, no keys found' }
  const digest = secretDigest(token)
  const known = remembered.get(digest, candidates)
  if (known) return { payload: known }
  const errors: string[] = []
  for (const key of candidates) {
    const alg = typeof header.alg === 'string' ? header.alg : ''
    // `none`, HMAC (a public key used as a shared secret) and another key type's algorithm never verify.
    const verifier = key.verifierFor(alg)
    if (!verifier) {
      errors.push('go-jose/go-jose: unexpected signature algorithm in JWS header')
      continue
    }
    try {
      const { payload } = await compactVerify(token, await verifier, { algorithms: [alg] })
      const parsed: unknown = JSON.parse(decoder.decode(payload))
      if (!isPlainObject(parsed)) return { error: 'go-jose/go-jose: payload is not a JSON object' }
      // Frozen: every later request with the token reads this one payload.
      const frozen = deepFreeze(parsed)
      remembered.set(digest, key, frozen)
      return { payload: frozen }
    } catch {
      errors.push('go-jose/go-jose: error in cryptographic primitive')
    }
  }
  return { error: errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]` }
}

export function jwtTokenAuthenticator(config: JwtAuthenticatorConfig): TokenAuthenticator {
  const issuers = new Set(config.issuers)
  const implicit = config.implicitAudiences
  const remembered = new VerifiedSignatures()
  return {
    async authenticateToken(token, requested, notes): Promise<TokenAuthResult> {
      const iss = unverifiedIssuer(token)
      if (iss === undefined || !issuers.has(iss)) return undefined
      const verified = await verifiedPayload(token, config.keys, remembered)
      if ('error' in verified) return verified
      let claims: TokenClaims
      try {
        claims = readTokenClaims(verified.payload)
      } catch (err) {
        return { error: (err as Error).message }
      }
      if (!issuers.has(claims.iss ?? '')) return { error: `token issuer ${JSON.stringify(claims.iss ?? '')} is invalid` }
      // A token without audiences (a legacy one) is meant for this API alone; its use is noted, whatever comes of it.
      if (!claims.aud?.length) {
        if (notes) notes.annotations['authentication.k8s.io/legacy-token'] = claims.sub ?? ''
        config.countLegacyToken?.()
      }
      const tokenAudiences = claims.aud?.length ? claims.aud : implicit
      const wanted = requested ?? implicit
      const audiences = intersectAudiences(tokenAudiences, wanted)
      if (!audiences.length && implicit.length)
        return { error: `token audiences ${quotedList(tokenAudiences)} is invalid for the target audiences ${quotedList(wanted)}` }
      const user = await config.validate(token, claims, verified.payload, notes)
      if ('error' in user) return user
      return { user, audiences }
    },
  }
}
