/**
 * Bearer tokens, as upstream's authenticator.Token: each token authenticator
 * knows some tokens; one chain of them serves both the `Authorization: Bearer`
 * request authenticator and TokenReview, so the two never disagree.
 */
import type { StaticToken } from '../options/api-server-options.js'
import type { AuthResult, Authenticator } from './authenticator.js'

/** Who a token belongs to; undefined when this authenticator does not know the token at all. */
export interface TokenAuthenticator {
  /**
   * `audiences`: those the caller wants the token to be meant for
   * (TokenReview's `spec.audiences`); an audience-aware method (the token
   * webhook) passes them on. Unset: no particular audience.
   */
  authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult>
}

export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization')
  if (!header) return undefined
  const m = /^bearer\s+(.*)$/i.exec(header.trim())
  return m ? (m[1] ?? '').trim() : undefined
}

/** The `--token-auth-file` tokens. */
export function staticTokenAuthenticator(tokens: readonly StaticToken[]): TokenAuthenticator {
  const byToken = new Map(tokens.map((t) => [t.token, t.user]))
  return {
    authenticateToken: async (token) => {
      const user = byToken.get(token)
      return user ? { user } : undefined
    },
  }
}

/** Token authenticators in order: the first that knows the token decides (upstream's token union). */
export function tokenChain(authenticators: readonly TokenAuthenticator[]): TokenAuthenticator {
  return {
    authenticateToken: async (token, audiences) => {
      const errors: string[] = []
      for (const a of authenticators) {
        const result = await a.authenticateToken(token, audiences)
        if (!result) continue
        if ('user' in result) return result
        errors.push(result.error)
      }
      return errors.length ? { error: errors.join(', ') } : undefined
    },
  }
}

/** `Authorization: Bearer <token>` put to the token chain; a token nobody knows is a 401, never anonymous. */
export function bearerTokenAuthenticator(tokens: TokenAuthenticator): Authenticator {
  return {
    async authenticate(request) {
      const token = bearerToken(request)
      if (token === undefined) return undefined
      const result = token ? await tokens.authenticateToken(token) : undefined
      return result ?? { error: 'invalid bearer token' }
    },
  }
}
