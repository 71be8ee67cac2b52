/**
 * Authentication: who is asking. A request handed to `fetch` by the
 * embedding program itself (no connection info, no credential) runs as the
 * embedder's chosen identity; everything else goes through the authenticators.
 * Once a request is authenticated its `Authorization` header is removed, as
 * upstream's filter does: no handler, webhook call or audit event after
 * this point can read or pass on the caller's credential.
 */
import type { MiddlewareHandler } from 'hono'
import type { RequestAuthenticator } from '../../authn/authenticator.js'
import type { Logger } from '../../logging/logger.js'
import type { UserInfo } from '../../machinery/object.js'
import { unauthorized } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

export function authenticationFilter(
  authenticator: RequestAuthenticator,
  embeddedIdentity: UserInfo | null,
  logger: Logger,
): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const connection = c.env?.connection
    const internalUser = c.env?.internalUser
    if (internalUser) {
      c.set('user', internalUser)
      return next()
    }
    if (!connection && embeddedIdentity && !c.req.header('authorization')) {
      c.set('user', embeddedIdentity)
      return next()
    }
    const result = await authenticator.authenticate(c.req.raw, connection ?? {})
    if ('error' in result) {
      logger.debug({ module: 'authentication', path: c.req.path, reason: result.error }, 'unable to authenticate the request')
      throw unauthorized()
    }
    c.set('user', result.user)
    c.req.raw.headers.delete('authorization')
    await next()
  }
}
