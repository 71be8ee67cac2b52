/**
 * The filter chain, assembled in one place in upstream's order (outermost
 * first; docs/architecture.md). Filters not built yet are named where they go.
 */
import type { Tracer } from '@opentelemetry/api'
import { Hono, type MiddlewareHandler } from 'hono'
import type { Auditor } from '../audit/auditor.js'
import type { RequestAuthenticator } from '../authn/authenticator.js'
import type { Authorizer } from '../authz/authorizer.js'
import type { ServerLifecycle } from '../lifecycle/lifecycle.js'
import type { Metrics } from '../metrics/metrics.js'
import type { ServingOptions } from '../options/serving-options.js'
import type { Logger } from '../logging/logger.js'
import type { UserInfo } from '../machinery/object.js'
import type { RequestInfo } from '../machinery/request-info.js'
import { authenticationFilter } from './filters/authentication.js'
import { authorizationFilter } from './filters/authorization.js'
import type { ChainEnv } from './filters/context.js'
import { auditFilter, auditIdFilter } from './filters/audit.js'
import { corsFilter } from './filters/cors.js'
import { type GzipStream, responseCompressionFilter } from './filters/compression.js'
import { hstsFilter } from './filters/hsts.js'
import { httpLogFilter } from './filters/httplog.js'
import { maxInFlightFilter } from './filters/max-in-flight.js'
import { countTermination, handlerReachedFilter, requestMetricsFilter } from './filters/metrics.js'
import { measuredAuthorizer } from '../authz/measured-authorizer.js'
import { priorityAndFairnessFilter } from './filters/priority-and-fairness.js'
import type { FlowControl } from '../flowcontrol/flow-control.js'
import { impersonationFilter } from './filters/impersonation.js'
import { prettyFilter } from './filters/pretty.js'
import { errorHandler } from './filters/recovery.js'
import { requestInfoFilter } from './filters/request-info.js'
import { inFlightWaitGroupFilter, shutdownRetryAfterFilter } from './filters/shutdown.js'
import { timeoutFilter } from './filters/timeout.js'
import { tracingFilter } from './filters/tracing.js'
import { SharedRouter } from './shared-router.js'

export interface ChainDeps {
  logger: Logger
  authenticator: RequestAuthenticator
  authorizer: Authorizer
  embeddedIdentity: UserInfo | null
  requestTimeoutMs: number
  lifecycle: ServerLifecycle
  metrics: Metrics
  /** Whether a resource request names a resource and subresource the server serves (bounds the metrics' labels); @default every resource */
  served?: (info: RequestInfo) => boolean
  serving: ServingOptions
  /** Records requests as `--audit-policy-file` says; undefined: no auditing. */
  auditor?: Auditor
  /** API Priority and Fairness; undefined while it is off, and max-in-flight limits instead. */
  flowControl?: FlowControl
  /** A span per request (`--tracing-config-file`); undefined: no tracing. */
  tracer?: Tracer
  /** Compresses large API answers for clients that accept gzip (APIResponseCompression); undefined: never. */
  gzipStream?: GzipStream
  /** Records each answered request for an embedding test (`options.record`); undefined: none. */
  activity?: MiddlewareHandler<ChainEnv>
}

/** Upstream's `--max-requests-inflight` and `--max-mutating-requests-inflight` defaults. */
export const DEFAULT_IN_FLIGHT = { readOnly: 400, mutating: 200 }

/** Adds a filter that its options may have turned off (undefined). */
function use(app: Hono<ChainEnv>, filter: MiddlewareHandler<ChainEnv> | undefined): void {
  if (filter) app.use(filter)
}

/** A hono app whose middleware is the chain; routes added to it run as the handler. */
export function buildChain(deps: ChainDeps): Hono<ChainEnv> {
  // Servers built alike compile their route table once between them (shared-router.ts).
  const app = new Hono<ChainEnv>({ router: new SharedRouter() })
  app.onError(errorHandler(deps.logger)) // panic recovery
  // Outside every other filter: they see the answer as it was made, as upstream compresses in its serializer's writer.
  use(app, deps.gzipStream ? responseCompressionFilter(deps.gzipStream) : undefined)
  app.use(auditIdFilter)
  app.use(requestInfoFilter)
  // Outside every refusal below, so that a 401, 403 or 429 is recorded with the rest.
  use(app, deps.activity)
  // Not a filter upstream but part of writing every answer: indented JSON for ?pretty and people's clients.
  app.use(prettyFilter)
  app.use(httpLogFilter(deps.logger))
  if (deps.serving.shutdownSendRetryAfter) app.use(shutdownRetryAfterFilter(deps.lifecycle))
  use(app, hstsFilter(deps.serving.hstsDirectives ?? []))
  // cache-control, warnings: later
  app.use(inFlightWaitGroupFilter(deps.lifecycle))
  const served = deps.served ?? (() => true)
  app.use(
    timeoutFilter(deps.requestTimeoutMs, (request, info) => {
      if (!info.isResourceRequest || served(info)) countTermination(deps.metrics, info, request, 504)
    }),
  )
  use(app, corsFilter(deps.serving.corsAllowedOrigins ?? []))
  app.use(authenticationFilter(deps.authenticator, deps.embeddedIdentity, deps.logger, deps.auditor))
  // Upstream records in its handlers: this times from here, and records what reached one (handlerReachedFilter) and 429s.
  app.use(requestMetricsFilter(deps.metrics, { served }))
  // After authentication, as upstream since its tracing trusts privileged users' trace context.
  use(app, deps.tracer ? tracingFilter(deps.tracer) : undefined)
  use(app, deps.auditor ? auditFilter(deps.auditor) : undefined)
  app.use(impersonationFilter(deps.authorizer))
  if (deps.flowControl) app.use(priorityAndFairnessFilter(deps.flowControl, deps.metrics, Math.min(15_000, deps.requestTimeoutMs / 4)))
  else use(app, maxInFlightFilter(deps.serving.maxInFlight ?? DEFAULT_IN_FLIGHT, deps.metrics))
  // Only the filter's decision is counted in authorization_attempts_total (impersonation checks are not, as upstream).
  app.use(authorizationFilter(measuredAuthorizer(deps.authorizer, deps.metrics)))
  app.use(handlerReachedFilter)
  return app
}
