/**
 * Verifying one compact JWT against an issuer, in go-oidc's order and words
 * (upstream's OIDC authenticator uses it): the claims checks (issuer,
 * audience, expiry, not-before), then the algorithm and the signature.
 * `alg: none` and HMAC never verify: only the asymmetric algorithms of
 * `--oidc-signing-algs` are accepted, and only RSA and EC keys are imported.
 */
import { compactVerify } from 'jose'
import { base64UrlDecode } from '../../machinery/base64.js'
import type { IssuerKeys } from './issuer-keys.js'
import { shareAudience } from '../audiences.js'

/** The asymmetric algorithms upstream allows (RFC 7518 section 3.1). */
export const ALLOWED_SIGNING_ALGORITHMS: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
])

/** go-oidc allows a token whose nbf is up to a minute in the future (clocks drift). */
const NOT_BEFORE_LEEWAY_MS = 60_000

export interface VerifyOptions {
  issuer: string
  audiences: readonly string[]
  algorithms: readonly string[]
  keys: IssuerKeys
  now: () => Date
}

export type Verified = { claims: Record<string, unknown>; expiresAt: number } | { error: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A JWT part: unpadded base64url of UTF-8 JSON (Go's RawURLEncoding), decoded by the runtime, not a character at a time. */
function decodeJson(part: string): unknown {
  return JSON.parse(utf8.decode(base64UrlDecode(part))) as unknown
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The claims of a compact JWT without checking anything: only to pick the authenticator (untrustedIssuer). */
export function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  if (token.trimStart().startsWith('{')) return undefined
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const claims = decodeJson(parts[1] ?? '')
    return isObject(claims) ? claims : undefined
  } catch {
    return undefined
  }
}

/** Google's tokens may name their issuer without the scheme; go-oidc takes that for Google alone. */
const GOOGLE_ISSUER = 'https://accounts.google.com'
const GOOGLE_ISSUER_WITHOUT_SCHEME = 'accounts.google.com'

/** The issuer a token claims, unchecked, as upstream's untrustedIssuer reads it: only to pick the authenticator. */
export function untrustedIssuer(token: string): string | undefined {
  const iss = unverifiedClaims(token)?.['iss']
  if (typeof iss !== 'string') return undefined
  return iss === GOOGLE_ISSUER_WITHOUT_SCHEME ? GOOGLE_ISSUER : iss
}

/** A Go `%q` of a string list: `["a" "b"]`. */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`
}

/** A time as Go prints a time.Time in UTC: `2006-01-02 15:04:05 +0000 UTC`. */
function goTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')} +0000 UTC`
}

function audiencesOf(aud: unknown): string[] | undefined {
  if (typeof aud === 'string') return [aud]
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud
  return aud === undefined ? [] : undefined
}

function numericDate(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value * 1000 : undefined
}

function checkClaims(claims: Record<string, unknown>, options: VerifyOptions): string | undefined {
  const googleWithoutScheme = options.issuer === GOOGLE_ISSUER && claims['iss'] === GOOGLE_ISSUER_WITHOUT_SCHEME
  if (claims['iss'] !== options.issuer && !googleWithoutScheme) {
    return `oidc: id token issued by a different provider, expected ${JSON.stringify(options.issuer)} got ${JSON.stringify(claims['iss'] ?? '')}`
  }
  const aud = audiencesOf(claims['aud'])
  if (!aud) return 'oidc: malformed jwt payload: the aud claim is neither a string nor a list of strings'
  if (!shareAudience(aud, options.audiences)) {
    const expected = options.audiences.length === 1 ? JSON.stringify(options.audiences[0]) : `in ${goQuotedList(options.audiences)}`
    return `oidc: expected audience ${expected} got ${goQuotedList(aud)}`
  }
  const now = options.now().getTime()
  const exp = numericDate(claims['exp']) ?? 0
  if (exp <= now) return `oidc: token is expired (Token Expiry: ${goTime(exp)})`
  const nbf = numericDate(claims['nbf'])
  if (nbf !== undefined && now + NOT_BEFORE_LEEWAY_MS < nbf) {
    return `oidc: current time ${goTime(now)} before the nbf (not before) time: ${goTime(nbf)}`
  }
  return undefined
}

/** Verifies `token`; answers its claims and expiry, or why it is refused (without the `oidc: verify token:` prefix). */
export async function verifyJwt(token: string, options: VerifyOptions): Promise<Verified> {
  const parts = token.split('.')
  let header: unknown
  let claims: unknown
  try {
    if (parts.length !== 3) throw new Error('compact JWS format must have three parts')
    header = decodeJson(parts[0] ?? '')
    claims = decodeJson(parts[1] ?? '')
  } catch (err) {
    return { error: `oidc: malformed jwt: ${(err as Error).message}` }
  }
  if (!isObject(header) || !isObject(claims)) return { error: 'oidc: malformed jwt: header and payload must be JSON objects' }
  const problem = checkClaims(claims, options)
  if (problem) return { error: problem }

  const alg = header['alg']
  if (typeof alg !== 'string' || !options.algorithms.includes(alg) || !ALLOWED_SIGNING_ALGORITHMS.has(alg)) {
    return { error: `oidc: id token signed with unsupported algorithm, expected ${goQuotedList(options.algorithms)} got ${JSON.stringify(alg ?? '')}` }
  }
  if (!options.keys.initialized) return { error: 'oidc: authenticator not initialized' }
  const kid = typeof header['kid'] === 'string' ? header['kid'] : undefined
  for (const key of await options.keys.candidates(kid, alg)) {
    try {
      await compactVerify(token, key, { algorithms: [alg] })
      return { claims, expiresAt: numericDate(claims['exp']) ?? 0 }
    } catch {
      // another key may match
    }
  }
  return { error: 'failed to verify signature: failed to verify id token signature' }
}
