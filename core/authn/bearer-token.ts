/** `Authorization: Bearer <token>` checked against the static token file. */
import type { StaticToken } from '../options/api-server-options.js'
import type { Authenticator } from './authenticator.js'

export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization')
  if (!header) return undefined
  const m = /^bearer\s+(.*)$/i.exec(header.trim())
  return m ? (m[1] ?? '').trim() : undefined
}

export function staticTokenAuthenticator(tokens: readonly StaticToken[]): Authenticator {
  const byToken = new Map(tokens.map((t) => [t.token, t.user]))
  return {
    authenticate(request) {
      const token = bearerToken(request)
      if (token === undefined) return undefined
      const user = token ? byToken.get(token) : undefined
      return user ? { user } : { error: 'invalid bearer token' }
    },
  }
}
