/**
 * Upstream's token cache (cached_token_authenticator.go), which kube-apiserver
 * wraps around its union of token authenticators with a success TTL of ten
 * seconds and no failure TTL: a token asked for some audiences and answered
 * with a user is answered the same, without asking the authenticators, for
 * ten seconds, and the audit annotations and warnings they noted the first
 * time are noted again on each request. A refusal is asked again every time.
 * Requests that bring a token whose lookup is under way wait for that lookup
 * (upstream's singleflight), so a burst of one client's requests costs one
 * signature check and one look at its service account.
 *
 * As upstream, a token whose service account, Secret or bootstrap token was
 * deleted, or which expired, still authenticates for up to ten seconds after
 * the lookup that admitted it. Entries are filed by a digest of the token and
 * the audiences (each length-prefixed, so no two pairs share a digest), never
 * by the token itself.
 */
import { newAuthNotes, type AuthNotes } from './authenticator.js'
import type { TokenAuthenticator, TokenAuthResult } from './bearer-token.js'
import { secretDigest } from './constant-time.js'
import {
  TOKEN_CACHE_ACTIVE_FETCHES,
  TOKEN_CACHE_BUCKETS,
  TOKEN_CACHE_FETCHES,
  TOKEN_CACHE_REQUEST_DURATION,
  TOKEN_CACHE_REQUESTS,
  type TokenCacheMetrics,
} from './token-cache-metrics.js'
import { appendAll } from '../machinery/append-all.js'

/** Upstream's `TokenSuccessCacheTTL`. */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000

/** Answers kept at once; past it the oldest are dropped (upstream's map has no bound, its entries only expire). */
const MAX_KEPT = 10_000

export interface TokenCacheOptions {
  /** Milliseconds since the epoch, the server's clock. */
  now: () => number
  /** How long a success is kept; 0 keeps nothing. @default TOKEN_SUCCESS_CACHE_TTL_MS */
  successTtlMs?: number
  metrics?: TokenCacheMetrics
}

export interface TokenCache extends TokenAuthenticator {
  /** Forgets every answer (the authenticators changed). */
  clear(): void
}

/** An answer of the authenticators, with what they noted while giving it. */
interface Answer {
  result: TokenAuthResult
  noted: AuthNotes
}

/** The digest a token and audiences are filed under. */
function keyOf(token: string, audiences: readonly string[] | undefined): string {
  let text = `${token.length}:${token}|${audiences?.length ?? 0}`
  for (const audience of audiences ?? []) text += `|${audience.length}:${audience}`
  return secretDigest(text)
}

/**
 * A kept answer's user is handed to every request that brings the token:
 * frozen, so that code changing a request's user in place fails there
 * instead of changing who the next request runs as.
 */
function frozen(result: TokenAuthResult): TokenAuthResult {
  if (!result || !('user' in result)) return result
  const { user } = result
  Object.freeze(user.groups)
  if (user.extra) {
    for (const values of Object.values(user.extra)) Object.freeze(values)
    Object.freeze(user.extra)
  }
  Object.freeze(user)
  if (result.audiences) Object.freeze(result.audiences)
  return Object.freeze(result)
}

function replay(answer: Answer, notes: AuthNotes | undefined): TokenAuthResult {
  if (notes) {
    Object.assign(notes.annotations, answer.noted.annotations)
    appendAll(notes.warnings, answer.noted.warnings)
  }
  return answer.result
}

export function cachedTokenAuthenticator(inner: TokenAuthenticator, options: TokenCacheOptions): TokenCache {
  const ttlMs = options.successTtlMs ?? TOKEN_SUCCESS_CACHE_TTL_MS
  const kept = new Map<string, { answer: Answer; expiresAt: number }>()
  const lookups = new Map<string, Promise<Answer>>()
  /** Counts clear() calls: a lookup begun before one keeps nothing, as it asked the authenticators that were. */
  let generation = 0
  const { metrics } = options
  const counter = (definition: typeof TOKEN_CACHE_REQUESTS, status: string) => metrics?.counter(definition.name, definition.help, { status })
  const requests = { hit: counter(TOKEN_CACHE_REQUESTS, 'hit'), miss: counter(TOKEN_CACHE_REQUESTS, 'miss') }
  const duration = (status: string) => metrics?.histogram(TOKEN_CACHE_REQUEST_DURATION.name, TOKEN_CACHE_REQUEST_DURATION.help, TOKEN_CACHE_BUCKETS, { status })
  const durations = { hit: duration('hit'), miss: duration('miss') }
  const fetches = { ok: counter(TOKEN_CACHE_FETCHES, 'ok'), error: counter(TOKEN_CACHE_FETCHES, 'error') }
  const inFlight = metrics?.gauge(TOKEN_CACHE_ACTIVE_FETCHES.name, TOKEN_CACHE_ACTIVE_FETCHES.help, { status: 'in_flight' })
  const blocked = metrics?.gauge(TOKEN_CACHE_ACTIVE_FETCHES.name, TOKEN_CACHE_ACTIVE_FETCHES.help, { status: 'blocked' })

  const answered = (status: 'hit' | 'miss', started: number): void => {
    requests[status]?.add()
    // Upstream observes whole milliseconds.
    durations[status]?.observe(Math.floor(performance.now() - started) / 1000)
  }

  const lookUp = async (key: string, token: string, audiences: readonly string[] | undefined): Promise<Answer> => {
    inFlight?.add(1)
    let status: 'ok' | 'error' = 'error'
    const begun = generation
    try {
      const noted = newAuthNotes()
      const result = await inner.authenticateToken(token, audiences, noted)
      status = result && 'error' in result ? 'error' : 'ok'
      const answer = { result: frozen(result), noted }
      if (ttlMs > 0 && result && 'user' in result && begun === generation) {
        if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!)
        kept.set(key, { answer, expiresAt: options.now() + ttlMs })
      }
      return answer
    } finally {
      inFlight?.add(-1)
      fetches[status]?.add()
    }
  }

  return {
    async authenticateToken(token, audiences, notes) {
      const started = performance.now()
      const key = keyOf(token, audiences)
      const entry = kept.get(key)
      if (entry) {
        if (entry.expiresAt > options.now()) {
          answered('hit', started)
          return replay(entry.answer, notes)
        }
        kept.delete(key)
      }
      blocked?.add(1)
      try {
        let lookup = lookups.get(key)
        if (!lookup) {
          lookup = lookUp(key, token, audiences)
          lookups.set(key, lookup)
          const ours = lookup
          const forget = (): void => {
            if (lookups.get(key) === ours) lookups.delete(key)
          }
          lookup.then(forget, forget)
        }
        return replay(await lookup, notes)
      } finally {
        blocked?.add(-1)
        answered('miss', started)
      }
    },
    clear() {
      generation++
      kept.clear()
      lookups.clear()
    },
  }
}
