/**
 * The request path as createApiServer wires it: the filter chain
 * (authentication, audit, tracing, priority and fairness, authorization),
 * then the routes: profiling, the encryption rewrite, logs, and the API
 * itself with what each resource handler is given.
 */
import type { Tracer } from '@opentelemetry/api'
import type { Aggregator } from '../aggregator/aggregator.js'
import { installLogsRoutes } from '../api/logs.js'
import { installDebugFlagsRoutes } from '../api/debug-flags.js'
import { installFlowControlDebugRoutes } from '../api/flowcontrol-debug.js'
import { installProfilingRoutes } from '../api/profiling.js'
import { installRoutes, type RequestParts } from '../api/routes.js'
import { DEFAULT_VERSION, versionInfo, withEmulation } from '../api/version.js'
import { Auditor } from '../audit/auditor.js'
import type { ServerMembership } from '../controllers/server-membership.js'
import type { ActivityRecorder } from '../embedding/activity.js'
import { installEncryptionRewriteRoute } from '../encryption/rewrite-route.js'
import type { FlowControl } from '../flowcontrol/flow-control.js'
import { buildChain, DEFAULT_IN_FLIGHT } from '../http/chain.js'
import { sizedResponse } from '../http/respond.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import type { ServerLifecycle } from '../lifecycle/lifecycle.js'
import type { Logger } from '../logging/logger.js'
import type { KubeObject } from '../machinery/object.js'
import type { HandlerEnv } from '../endpoints/handlers.js'
import { measuredAuthenticator } from '../metrics/security-metrics.js'
import { Metrics } from '../metrics/metrics.js'
import { watchMetrics } from '../metrics/watch-metrics.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import { minorsBefore, serverMajorMinor } from '../options/flags/versions.js'
import type { ServerPorts } from '../ports.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { Registry } from '../registry/registry.js'
import { storedObjects } from '../registry/stored-objects.js'
import type { Catalogue } from '../resources/catalogue.js'
import { type Emulation, isEmulating } from '../resources/emulation.js'
import type { AssembledStorage } from './storage.js'
import type { assembleSecurity } from './security.js'
import { SIMULATED_NODE_AGENT } from '../simulation/agent.js'
import { inProcessRequest } from '../machinery/in-process-request.js'
import { webGzipStream } from '../http/filters/compression.js'

const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024

export interface ServingWiring {
  readonly options: ApiServerOptions
  readonly ports: Partial<ServerPorts>
  readonly registry: Registry
  readonly catalogue: Catalogue
  readonly chains: ReturnType<typeof assembleSecurity>
  readonly lifecycle: ServerLifecycle
  readonly hooks: ServerHooks
  readonly metrics: Metrics
  readonly tracer: Tracer | undefined
  readonly activity: ActivityRecorder
  readonly flowControl: FlowControl | undefined
  readonly aggregator: Aggregator | undefined
  readonly membership: ServerMembership
  readonly storage: AssembledStorage
  readonly externalAddress: () => string
  readonly logger: Logger
  readonly now: () => Date
  /** The emulated release, when the server emulates one. */
  readonly emulated: Emulation | undefined
  /** How the server reaches node agents (and aggregated servers). */
  readonly transport: ProxyTransport
  readonly checks: { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] }
}

export type ServingApp = ReturnType<typeof buildChain>

export function installServing(w: ServingWiring): ServingApp {
  const { options, ports, registry, catalogue, chains, lifecycle, metrics, tracer, logger, now } = w
  const serving = options.serving ?? {}
  const auditor = options.audit ? new Auditor(options.audit.policy, options.audit.backends, metrics, logger, now) : undefined
  // What the audit backends still hold is written before the server is gone.
  if (auditor) w.hooks.onShutdown(() => auditor.shutdown(), 'flush')
  const app = buildChain({
    ...(auditor ? { auditor } : {}),
    ...(tracer ? { tracer } : {}),
    activity: w.activity.requestFilter(),
    logger,
    authenticator: measuredAuthenticator(chains.authentication.request, metrics),
    authorizer: chains.authorization.authorizer,
    embeddedIdentity: options.embeddedIdentity ?? null,
    requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    lifecycle,
    ...(w.flowControl ? { flowControl: w.flowControl } : {}),
    metrics,
    served: (info) => {
      const entry = catalogue.lookup(info.apiGroup, info.apiVersion, info.resource)
      return entry !== undefined && (info.subresource === '' || (entry.subresources ?? []).some((s) => s.name === info.subresource))
    },
    serving,
    ...((serving.responseCompression ?? true) ? { gzipStream: ports.gzipStream ?? webGzipStream } : {}),
  })
  // The health check SLIs: a registry of their own, under the same metrics flags, as upstream's.
  const slis = new Metrics(options.metrics)
  if ((serving.profiling ?? true) && ports.profiler) installProfilingRoutes(app, ports.profiler)
  if (serving.profiling ?? true) {
    installDebugFlagsRoutes(app, (level) => logger.setVerbosity?.(level))
    // Upstream's metrics handlers with reset: DELETE empties every labelled series; other methods read them below.
    for (const [path, registry] of [['/metrics', metrics], ['/metrics/slis', slis]] as const) {
      app.delete(path, () => {
        registry.reset()
        return sizedResponse('metrics reset\n', { headers: { 'content-type': 'text/plain; charset=utf-8' } })
      })
    }
  }
  // Upstream installs the priority and fairness dumps with the filter, whatever --profiling says.
  if (w.flowControl) installFlowControlDebugRoutes(app, w.flowControl)
  // Encryption at rest configured: the rewrite after a rotation (docs/security.md, "Encryption at rest").
  const transformers = w.storage.transformers
  if (transformers) {
    installEncryptionRewriteRoute(app, {
      logger,
      targets: () => w.storage.factory.storedResources().flatMap(({ resource, storage }) => (transformers.covers(resource) ? [{ ...resource, storage }] : [])),
    })
  }
  if (ports.logFiles) installLogsRoutes(app, ports.logFiles)
  const version = options.version ?? DEFAULT_VERSION
  const emulation = w.emulated
  // Simulated nodes' agents answer in process, so a server with them reaches agents even when given no settings for it.
  const agentOptions = options.nodeAgent ?? (options.nodes ? SIMULATED_NODE_AGENT : undefined)
  const nodeAgent = agentOptions
    ? { catalogue, stored: storedObjects(registry), transport: w.transport, options: agentOptions, ...(ports.checkProxyable ? { checkProxyable: ports.checkProxyable } : {}) }
    : undefined
  const watchCounts = watchMetrics(metrics)
  // What every request's handler is given, but the request's own parts, made once.
  const maxBodyBytes = options.maxRequestBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const yamlDecoder = ports.yamlDecoder
  const minRequestTimeoutSeconds = options.minRequestTimeoutSeconds ?? 1800
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000
  const onShutdown = (end: () => void) => lifecycle.trackWatch(end)
  const serviceAccountTokens = chains.authentication.serviceAccountTokens
  const componentProbes = ports.componentProbes
  const servedRelease = emulation?.emulated ?? serverMajorMinor(version)
  // One literal naming every field, so that every request's env has one shape: under Node 20's V8 a spread of the
  // settings with the request's fields added made each env a hidden class of its own (some 2 µs a request, and
  // every read of the env a megamorphic lookup after it).
  const authorizer = chains.authorization.authorizer
  const handlerEnv = ({ user, auditAnnotations, auditRequestObject, authWarnings, passUpgrade, remoteAddress }: RequestParts): HandlerEnv => ({
    registry,
    authorizer,
    now,
    maxBodyBytes,
    yamlDecoder,
    minRequestTimeoutSeconds,
    bookmarkIntervalMs,
    onShutdown,
    serviceAccountTokens,
    watchMetrics: watchCounts,
    nodeAgent,
    componentProbes,
    servedRelease,
    user,
    auditAnnotations,
    auditRequestObject,
    authWarnings,
    passUpgrade,
    remoteAddress,
  })
  installRoutes(app, {
    catalogue,
    tracer,
    ...(options.externalHostname || options.advertiseAddress ? { externalAddress: w.externalAddress } : {}),
    version: isEmulating(emulation)
      ? withEmulation(versionInfo(version), emulation.emulated, emulation.minCompatibility ?? minorsBefore(emulation.emulated, 1))
      : versionInfo(version),
    metrics,
    slis,
    runtimeMetrics: ports.runtimeMetrics,
    checks: w.checks,
    handlerEnv,
    issuerDiscovery: chains.authentication.serviceAccountTokens,
    logs: ports.logFiles !== undefined,
    ...(w.aggregator ? { aggregator: w.aggregator } : {}),
    ...(w.membership.peers ? { peers: w.membership.peers } : {}),
  })
  return app
}

/** The in-flight limits priority and fairness shares out, and how long a request may wait in a queue. */
export function flowControlLimits(options: ApiServerOptions): { serverConcurrencyLimit: number; requestWaitLimitMs: number } {
  const inFlight = options.serving?.maxInFlight ?? DEFAULT_IN_FLIGHT
  // Upstream's wait limit in a queue: a quarter of the request timeout, at most 15s.
  return { serverConcurrencyLimit: inFlight.readOnly + inFlight.mutating, requestWaitLimitMs: Math.min(15_000, (options.requestTimeoutMs ?? 60_000) / 4) }
}

/** Creates one seed object through the API as system:admin. */
export function seedRequest(app: ServingApp, path: string, object: KubeObject): Promise<Response> {
  return Promise.resolve(
    app.fetch(inProcessRequest(`http://in-process${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, JSON.stringify(object)), {
      internalUser: ADMIN_IDENTITY,
    }),
  )
}
