/**
 * Bearer tokens, as upstream's authenticator.Token: each token authenticator
 * knows some tokens; one chain of them serves both the `Authorization: Bearer`
 * request authenticator and TokenReview, so the two never disagree.
 */
import type { StaticToken } from '../config/token-file.js'
import type { UserInfo } from '../machinery/object.js'
import type { Authenticator, AuthNotes } from './authenticator.js'
import { constantTimeEqual, secretDigest } from './constant-time.js'
import { intersectAudiences, shareAudience } from './audiences.js'

/**
 * Who a token belongs to and which of the audiences asked for it is good
 * for; undefined when this authenticator does not know the token at all.
 */
export type TokenAuthResult = { user: UserInfo; audiences?: string[] } | { error: string } | undefined

export interface TokenAuthenticator {
  /**
   * `audiences`: who the token must be meant for (the API's audiences for a
   * request, a TokenReview's `spec.audiences`); undefined asks for none.
   * `notes`: where the request's audit annotations and warnings are noted.
   */
  authenticateToken(token: string, audiences?: readonly string[], notes?: AuthNotes): Promise<TokenAuthResult>
}

export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization')
  if (!header) return undefined
  const m = /^bearer\s+(.*)$/i.exec(header.trim())
  return m ? (m[1] ?? '').trim() : undefined
}

/**
 * The `--token-auth-file` tokens, filed by their digest and then compared
 * in constant time, so that the time a guess takes tells nothing of how
 * much of it was right. (Two lines with one token: the last wins, as a
 * map keyed by the token would have it.)
 */
export function staticTokenAuthenticator(tokens: readonly StaticToken[]): TokenAuthenticator {
  const byDigest = new Map(tokens.map((t) => [secretDigest(t.token), t] as const))
  return {
    authenticateToken: async (token) => {
      const known = byDigest.get(secretDigest(token))
      return known && constantTimeEqual(known.token, token) ? { user: known.user } : undefined
    },
  }
}

/**
 * A method that knows nothing of audiences (static and bootstrap tokens) is
 * good for the API's own audiences alone, as upstream's
 * WrapAudienceAgnosticToken: a token asked about for another audience is
 * not one it knows.
 */
export function audienceAgnostic(implicit: readonly string[], inner: TokenAuthenticator): TokenAuthenticator {
  return {
    async authenticateToken(token, requested, notes) {
      if (!requested) return inner.authenticateToken(token, undefined, notes)
      const audiences = intersectAudiences(implicit, requested)
      if (!audiences.length) return undefined
      const result = await inner.authenticateToken(token, undefined, notes)
      return result && 'user' in result ? { user: result.user, audiences } : result
    },
  }
}

/** Token authenticators in order: the first that knows the token decides (upstream's token union). */
export function tokenChain(authenticators: readonly TokenAuthenticator[]): TokenAuthenticator {
  return {
    authenticateToken: async (token, audiences, notes) => {
      const errors: string[] = []
      for (const a of authenticators) {
        const result = await a.authenticateToken(token, audiences, notes)
        if (!result) continue
        if ('user' in result) return result
        errors.push(result.error)
      }
      return errors.length ? { error: errors.join(', ') } : undefined
    },
  }
}

/**
 * `Authorization: Bearer <token>` put to the token chain, for the API's
 * audiences when it has any; a token nobody knows is a 401, never anonymous.
 */
export function bearerTokenAuthenticator(tokens: TokenAuthenticator, apiAudiences: readonly string[] = []): Authenticator {
  const asked = apiAudiences.length ? apiAudiences : undefined
  return {
    async authenticate(request, _connection, notes) {
      const token = bearerToken(request)
      if (token === undefined) return undefined
      return token ? tokenUser(tokens, token, asked, notes) : { error: 'invalid bearer token' }
    },
  }
}

/**
 * Who a bearer token a request brought stands for, asked for the API's
 * audiences (undefined: none); a token nobody knows is an error.
 */
export async function tokenUser(tokens: TokenAuthenticator, token: string, asked: readonly string[] | undefined, notes?: AuthNotes): Promise<{ user: UserInfo } | { error: string }> {
  const result = await tokens.authenticateToken(token, asked, notes)
  if (!result) return { error: 'invalid bearer token' }
  if (!('user' in result)) return result
  // As upstream's authentication filter: an answer for other audiences than the API's is refused.
  if (asked && result.audiences?.length && !shareAudience(result.audiences, asked)) return { error: 'unable to match audience' }
  return { user: result.user }
}
