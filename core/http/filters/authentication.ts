/**
 * Authentication: who is asking. A request handed to `fetch` by the
 * embedding program itself (no connection info, no credential) runs as the
 * embedder's chosen identity; everything else goes through the authenticators.
 * Once a request is authenticated its `Authorization` header is removed, as
 * upstream's filter does: no handler, webhook call or audit event after
 * this point can read or pass on the caller's credential.
 */
import type { MiddlewareHandler } from 'hono'
import { newAuthNotes, type RequestAuthenticator } from '../../authn/authenticator.js'
import type { Logger } from '../../logging/logger.js'
import type { UserInfo } from '../../machinery/object.js'
import { unauthorized } from '../../machinery/status-error.js'
import { type ChainEnv, replaceAnswer } from './context.js'
import { withWarnings } from '../warnings.js'
import type { Auditor } from '../../audit/auditor.js'
import { auditFailedAuthentication } from './audit.js'
import { nextMacrotask } from '../../machinery/time-slice.js'

export function authenticationFilter(
  authenticator: RequestAuthenticator,
  embeddedIdentity: UserInfo | null,
  logger: Logger,
  auditor?: Auditor,
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
    const notes = newAuthNotes()
    c.set('authNotes', notes)
    const result = await authenticator.authenticate(c.req.raw, connection ?? {}, notes)
    if ('error' in result) {
      logger.debug({ module: 'authentication', path: c.req.path, reason: result.error }, 'unable to authenticate the request')
      if (auditor) await auditFailedAuthentication(auditor, c)
      throw unauthorized()
    }
    c.set('user', result.user)
    c.req.raw.headers.delete('authorization')
    // The request goes on in a macrotask of its own, after what else has arrived (other connections'
    // requests, the answers and watch events of the store): requests that came in together then reach the
    // store together and their writes and answers go out in fewer, larger writes, and an update's guess from
    // the watch cache has heard of the writes acknowledged before it. Without it, a request checked at once
    // (a client certificate, and now a bearer token, whose digest no longer waits on the thread pool) went on
    // in the same task, and its creates and updates on etcd cost some 1.2x the CPU (docs/benchmarks.md,
    // "Writes with a client certificate").
    await nextMacrotask()
    await next()
    // Warnings no handler took out (an answer that is not a resource's, a refusal before the handler): written here.
    if (notes.warnings.length) writeWarnings(c, notes.warnings.splice(0))
  }
}

function writeWarnings(c: { res: Response }, warnings: string[]): void {
  try {
    withWarnings(c.res, warnings)
  } catch {
    // An answer relayed as it came has headers that cannot change: a copy carries them.
    replaceAnswer(c, withWarnings(new Response(c.res.body, c.res), warnings))
  }
}
