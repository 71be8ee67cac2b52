/**
 * The filter chain, assembled in one place in upstream's order (outermost
 * first; DESIGN.md section 4). Filters not built yet are named where they go.
 */
import { Hono } from 'hono'
import type { RequestAuthenticator } from '../authn/authenticator.js'
import type { Authorizer } from '../authz/authorizer.js'
import type { Logger } from '../ports.js'
import type { UserInfo } from '../resources/object.js'
import { authenticationFilter } from './filters/authentication.js'
import { authorizationFilter } from './filters/authorization.js'
import type { ChainEnv } from './filters/context.js'
import { impersonationFilter } from './filters/impersonation.js'
import { prettyFilter } from './filters/pretty.js'
import { errorHandler } from './filters/recovery.js'
import { requestInfoFilter } from './filters/request-info.js'
import { timeoutFilter } from './filters/timeout.js'

export interface ChainDeps {
  logger: Logger
  authenticator: RequestAuthenticator
  authorizer: Authorizer
  embeddedIdentity: UserInfo | null
  requestTimeoutMs: number
}

/** A hono app whose middleware is the chain; routes added to it run as the handler. */
export function buildChain(deps: ChainDeps): Hono<ChainEnv> {
  const app = new Hono<ChainEnv>()
  // audit init: later (audit issue)
  app.onError(errorHandler(deps.logger)) // panic recovery
  app.use(requestInfoFilter)
  // Not a filter upstream but part of writing every answer: indented JSON for ?pretty and people's clients.
  app.use(prettyFilter)
  // HTTP log, shutdown retry-after, HSTS, cache-control, warnings, in-flight wait group: later
  app.use(timeoutFilter(deps.requestTimeoutMs))
  // CORS: later
  app.use(authenticationFilter(deps.authenticator, deps.embeddedIdentity, deps.logger))
  // audit: later
  app.use(impersonationFilter(deps.authorizer))
  // max-in-flight / priority and fairness: later
  app.use(authorizationFilter(deps.authorizer))
  return app
}
