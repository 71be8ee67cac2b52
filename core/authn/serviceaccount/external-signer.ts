/**
 * Service-account tokens signed by an external signer
 * (`--service-account-signing-endpoint`), as upstream's
 * pkg/serviceaccount/externaljwt/plugin: the signer signs the payload this
 * server builds and hands back header and signature, which are checked
 * before a token is given out; its FetchKeys answer is the only set of
 * verifying keys, fetched at start, again when its refresh hint passes (10 s
 * after a failed attempt, keeping the keys it had), and again when a token
 * names a key id not known; its Metadata bounds token lifetimes.
 */
import { base64UrlDecode, base64UrlEncode } from '../../machinery/base64.js'
import type { Logger } from '../../logging/logger.js'
import type { ExternalJwtSigner, ExternalSignerKeys } from '../../ports.js'
import { isPlainObject } from '../../machinery/object.js'
import { EXTENDED_EXPIRATION_SECONDS, sortedJson, type TokenClaims } from './claims.js'
import type { PublicKeySet } from './key-set.js'
import { verificationKeyFromSpki, type VerificationKey } from './keys.js'

/** Upstream's bounds on each call: the key fetches, the metadata read at start, and (ours) one signature. */
const KEY_SYNC_TIMEOUT_MS = 60_000
const METADATA_TIMEOUT_MS = 10_000
const SIGN_TIMEOUT_MS = 30_000
const FALLBACK_REFRESH_MS = 10_000
/** The shortest token a TokenRequest may ask for; a signer that cannot issue it is misconfigured. */
const MIN_TOKEN_SECONDS = 600
const MAX_KEY_ID_LENGTH = 1024
/** The algorithms this server verifies service-account tokens with. */
const SIGNING_ALGORITHMS = new Set(['RS256', 'ES256', 'ES384', 'ES512'])
const HEADER_FIELDS = new Set(['alg', 'kid', 'typ'])

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** A problem with the signer that must stop start-up. */
export class ExternalSignerError extends Error {}

interface ExternalKey {
  key: VerificationKey
  excludeFromOidcDiscovery: boolean
}

interface KeySnapshot {
  keys: ExternalKey[]
  /** The keys discovery publishes, one array per fetch. */
  published: VerificationKey[]
  dataTimestamp: number
  nextRefreshAt: number
}

/** The answer of FetchKeys as keys, or an error naming what is wrong with it. */
async function readKeys(answer: ExternalSignerKeys, now: number): Promise<KeySnapshot> {
  if (!(answer.refreshHintSeconds > 0)) throw new Error(`found invalid refresh hint (${answer.refreshHintSeconds}s)`)
  if (!answer.keys.length) throw new Error('found no keys')
  if (!answer.dataTimestamp || Number.isNaN(answer.dataTimestamp.getTime())) throw new Error('invalid data timestamp')
  const keys: ExternalKey[] = []
  for (const k of answer.keys) {
    if (!k.keyId || k.keyId.length > MAX_KEY_ID_LENGTH) throw new Error(`found invalid public key id ${JSON.stringify(k.keyId)}`)
    if (!k.key.length) throw new Error('found empty public key')
    let key: VerificationKey
    try {
      key = await verificationKeyFromSpki(k.key, k.keyId)
    } catch (err) {
      throw new Error(`while parsing external public keys: ${(err as Error).message}`)
    }
    keys.push({ key, excludeFromOidcDiscovery: k.excludeFromOidcDiscovery })
  }
  return {
    keys,
    published: keys.filter((k) => !k.excludeFromOidcDiscovery).map((k) => k.key),
    dataTimestamp: answer.dataTimestamp.getTime(),
    nextRefreshAt: now + answer.refreshHintSeconds * 1000,
  }
}

/** The signer's keys, kept fresh; `stop` ends the periodic refresh. */
export interface ExternalKeyCache extends PublicKeySet {
  /** The key ids the signer marked as verify-only (never to sign new tokens). */
  excludedFromDiscovery(kid: string): boolean
  stop(): void
}

async function startKeyCache(client: ExternalJwtSigner, logger: Logger, now: () => number): Promise<ExternalKeyCache> {
  let snapshot: KeySnapshot = { keys: [], published: [], dataTimestamp: 0, nextRefreshAt: 0 }
  let pending: Promise<void> | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false

  // One fetch at a time: the tokens naming unknown key ids while one is under way wait for it.
  const sync = (): Promise<void> => {
    pending ??= (async () => {
      try {
        snapshot = await readKeys(await client.fetchKeys(KEY_SYNC_TIMEOUT_MS), now())
      } catch (err) {
        throw new Error(`while fetching token verification keys: ${(err as Error).message}`)
      } finally {
        pending = undefined
      }
    })()
    return pending
  }
  const schedule = (ms: number): void => {
    if (stopped) return
    timer = setTimeout(() => {
      sync().then(
        () => schedule(snapshot.nextRefreshAt - now()),
        (err: unknown) => {
          logger.error({ err: (err as Error).message }, 'refreshing the external signer keys failed; the keys fetched before are still used')
          schedule(FALLBACK_REFRESH_MS)
        },
      )
    }, Math.max(0, ms))
  }
  const matching = (kid: string): VerificationKey[] => snapshot.keys.filter((k) => !kid || k.key.kid === kid).map((k) => k.key)

  try {
    await sync()
  } catch (err) {
    throw new ExternalSignerError(`while setting up external-jwt-signer: while initially filling key cache: ${(err as Error).message}`)
  }
  schedule(snapshot.nextRefreshAt - now())

  return {
    async keysFor(kid) {
      const known = matching(kid)
      if (known.length) return known
      try {
        await sync()
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'fetching the external signer keys for an unknown key id failed')
        return []
      }
      return matching(kid)
    },
    published: () => ({
      keys: snapshot.published,
      maxAgeSeconds: Math.max(0, Math.floor((snapshot.nextRefreshAt - now()) / 1000)),
    }),
    excludedFromDiscovery: (kid) => snapshot.keys.some((k) => k.key.kid === kid && k.excludeFromOidcDiscovery),
    stop() {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
    },
  }
}

/** Why the header the signer answered may not go out in a token, or undefined when it may. */
function headerProblem(header: string, cache: ExternalKeyCache): string | undefined {
  let fields: unknown
  try {
    fields = JSON.parse(decoder.decode(base64UrlDecode(header)))
  } catch (err) {
    return `while parsing header JSON: ${(err as Error).message}`
  }
  if (!isPlainObject(fields)) return 'while parsing header JSON: not an object'
  const unknown = Object.keys(fields).find((k) => !HEADER_FIELDS.has(k))
  if (unknown !== undefined) return `while parsing header JSON: unknown field ${JSON.stringify(unknown)}`
  const { alg, kid, typ } = fields
  if (typ !== 'JWT') return 'bad type'
  if (typeof kid !== 'string' || !kid) return 'key id missing'
  if (kid.length > MAX_KEY_ID_LENGTH) return 'key id longer than 1 kb'
  if (typeof alg !== 'string' || !SIGNING_ALGORITHMS.has(alg)) return `bad signing algorithm ${JSON.stringify(alg)}`
  // Verify-only keys are kept for tokens issued before; a new token must not use one.
  if (cache.excludedFromDiscovery(kid)) return `key used for signing JWT (kid: ${kid}) is excluded from OIDC discovery docs`
  return undefined
}

export interface ExternalSigning {
  keys: ExternalKeyCache
  /** Signs the claims through the signer; throws when the signer fails or answers something unusable. */
  sign(claims: TokenClaims): Promise<string>
  /** `--service-account-max-token-expiration` once the signer's own bound is applied, in seconds. */
  maxExpirationSeconds: number
  /** How long an extended token lives: a year, or less when the signer allows less. */
  extendedExpirationSeconds: number
}

export interface ExternalSigningOptions {
  /** `--service-account-max-token-expiration` in seconds; 0 when not given. */
  maxExpirationSeconds: number
  logger: Logger
  now?: () => number
}

function secondsText(seconds: number): string {
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`
}

/**
 * Connects to the signer as upstream does at start: the keys first, then the
 * metadata. Any failure, or a lifetime bound that does not fit the flags, is
 * an ExternalSignerError that must stop start-up.
 */
export async function startExternalSigning(client: ExternalJwtSigner, options: ExternalSigningOptions): Promise<ExternalSigning> {
  const now = options.now ?? Date.now
  const keys = await startKeyCache(client, options.logger, now)
  try {
    let metadata: { maxTokenExpirationSeconds: number }
    try {
      metadata = await client.metadata(METADATA_TIMEOUT_MS)
    } catch (err) {
      throw new ExternalSignerError(`while setting up external-jwt-signer: ${(err as Error).message}`)
    }
    const signerMax = metadata.maxTokenExpirationSeconds
    if (signerMax < MIN_TOKEN_SECONDS)
      throw new ExternalSignerError(`max token life supported by external-jwt-signer (${signerMax}s) is less than acceptable (min ${MIN_TOKEN_SECONDS}s)`)
    if (options.maxExpirationSeconds > signerMax)
      throw new ExternalSignerError(
        `service-account-max-token-expiration cannot be set longer than the token expiration supported by service-account-signing-endpoint: ${secondsText(options.maxExpirationSeconds)} > ${secondsText(signerMax)}`,
      )
    return {
      keys,
      maxExpirationSeconds: options.maxExpirationSeconds || signerMax,
      extendedExpirationSeconds: Math.min(EXTENDED_EXPIRATION_SECONDS, signerMax),
      async sign(claims) {
        const payload = base64UrlEncode(encoder.encode(sortedJson(claims)))
        let answer: { header: string; signature: string }
        try {
          answer = await client.sign(payload, SIGN_TIMEOUT_MS)
        } catch (err) {
          throw new Error(`while signing jwt: ${(err as Error).message}`)
        }
        const problem = headerProblem(answer.header, keys)
        if (problem) throw new Error(`while validating header: ${problem}`)
        if (!answer.signature) throw new Error('empty signature returned')
        return `${answer.header}.${payload}.${answer.signature}`
      },
    }
  } catch (err) {
    keys.stop()
    throw err
  }
}
