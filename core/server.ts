/**
 * createApiServer: the whole server as one fetch handler. Runtimes add a
 * listener around it; tests call `fetch` directly. It only assembles: each
 * part is built in its own module (core/wiring/) and registers what it
 * starts, checks and stops with the server's hooks (core/lifecycle/hooks.ts).
 */
import { startAggregator } from './aggregator/aggregator.js'
import { accessDecider } from './authz/access-review.js'
import { DEFAULT_VERSION } from './api/version.js'
import { InformerFactory } from './client/informer-factory.js'
import { storageListWatch } from './client/list-watch.js'
import { candidateVersions } from './controllers/candidate-versions.js'
import { clusterServices } from './controllers/cluster-services.js'
import type { ClientCABundleUpdate } from './controllers/authentication-trust.js'
import { startCrdController } from './controllers/custom-resource-definitions.js'
import { serverMembership } from './controllers/server-membership.js'
import type { LoadedAuthenticationConfiguration } from './config/authentication.js'
import type { AuthorizerSpec } from './authz/authorizer-specs.js'
import { customResourceConversion } from './crd/conversion.js'
import { serviceResolver } from './crd/service-resolver.js'
import { fetchWebhookClient } from './crd/webhook-client.js'
import { type ActivityLog, ActivityRecorder } from './embedding/activity.js'
import { createSeedObjects, seedObjects } from './embedding/seed.js'
import { beginFromTemplate } from './embedding/startup-template.js'
import { FlowControl } from './flowcontrol/flow-control.js'
import { withMutableHeaders } from './http/mutable-request.js'
import { badRequestLineResponse, statusResponse } from './http/respond.js'
import { hasMalformedEscape, pathOfUrl } from './machinery/request-info.js'
import { ServerHooks } from './lifecycle/hooks.js'
import { ServerLifecycle } from './lifecycle/lifecycle.js'
import { AGGREGATOR_HOOKS, APIEXTENSIONS_CONTROLLERS, APIEXTENSIONS_INFORMERS, AUTOREGISTER_COMPLETION, BOOTSTRAP_CONTROLLER, CRD_INFORMER_SYNCED, FLOW_CONTROL_CONSUMER, FLOW_CONTROL_FILTER, isHealthPath, startupFailed } from './lifecycle/startup-parts.js'
import { silentLogger } from './logging/logger.js'
import { keepFirstLines } from './machinery/header-lines.js'
import { headerTooLarge } from './machinery/limits.js'
import { Metrics } from './metrics/metrics.js'
import type { ApiServerOptions } from './options/api-server-options.js'
import { ADMIN_IDENTITY, LOOPBACK_IDENTITY } from './machinery/identities.js'
import { serverMajorMinor } from './options/flags/versions.js'
import type { ConnectionInfo, ServerPorts } from './ports.js'
import { fetchProxyTransport } from './proxy/transport.js'
import { Registry } from './registry/registry.js'
import { storedObjects } from './registry/stored-objects.js'
import { withSimulatedAgents } from './simulation/agent.js'
import { simulatedNodesOptions } from './simulation/index.js'
import { builtinEntries } from './resources/builtin.js'
import { Catalogue, type ResourceEntry } from './resources/catalogue.js'
import { applyEmulation } from './resources/emulation.js'
import { applyRuntimeConfig } from './resources/runtime-config.js'
import type { MemorySnapshot } from './storage/memory.js'
import { TRACER_NAME } from './tracing/context.js'
import { registerBackgroundWork } from './wiring/background.js'
import type { ObjectObserver } from './storage/cacher.js'
import { registerBootstrap } from './wiring/bootstrap.js'
import { snapshotControls } from './wiring/embedding.js'
import { healthChecks } from './wiring/health.js'
import { flowControlLimits, installServing, seedRequest } from './wiring/serving.js'
import { assembleSecurity, LateSecurity, registryPolicy } from './wiring/security.js'
import { assembleStorage } from './wiring/storage.js'
import { ObjectClient } from './client/object-client.js'

export interface ApiServer {
  /**
   * Answers one request. `connection` is what the transport knows; without it the request runs as
   * `embeddedIdentity` when the embedder chose one, else it is authenticated like any other (anonymous at most).
   * Until `ready` settles a request waits for it (health checks excepted); once `ready` rejected, every request but
   * /healthz, /livez and /readyz is answered 503 ServiceUnavailable naming the failed check.
   */
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>
  /**
   * Resolves when start-up work (the system namespaces, the watch caches' first load, the indexes of
   * authorizers and admission plugins) is done; rejects when a part of it failed, for good: the server
   * then serves no requests (see `fetch`), and /readyz names the part.
   */
  ready: Promise<void>
  /** Ends open watches and background work. The storage is the caller's to close. */
  shutdown(): Promise<void>
  /** The port the server listens on, once known: the `kubernetes` Service and its endpoints point at it. */
  setSecurePort(port: number): Promise<void>
  /**
   * Replaces the authorizer chain without a restart (a changed
   * `--authorization-config`): resolves once the new chain answers requests;
   * rejects, leaving the old chain in effect, when it cannot be built.
   */
  reloadAuthorization(authorizers: readonly AuthorizerSpec[]): Promise<void>
  /** The runtime phases and what graceful shutdown waits on; a runtime drives it with gracefulShutdown (core/lifecycle). */
  readonly lifecycle: ServerLifecycle
  readonly catalogue: Catalogue
  /**
   * Puts a changed AuthenticationConfiguration into effect: its `jwt` list
   * replaces the JWT authenticators (the daemon calls it when the
   * `--authentication-config` file changes), once the new issuers were
   * tried. Rejects when the server was created without `authentication.jwt`.
   */
  reloadAuthenticationConfiguration(config: Pick<LoadedAuthenticationConfiguration, 'jwt'>): Promise<void>
  /**
   * The client-CA or front-proxy CA bundle changed (the daemon re-reads the
   * files): the `extension-apiserver-authentication` ConfigMap is written
   * again with them. Verifying client certificates is the transport's.
   */
  updateClientCAs(bundles: ClientCABundleUpdate): Promise<void>
  /**
   * Whether the post-start hooks that write fixed objects (priority
   * classes, priority and fairness's configuration, the RBAC policy) have
   * all finished. A runtime keeps a start-up template of the store only
   * then: a start from a template does not run those hooks.
   */
  fixedObjectsWritten(): boolean
  /**
   * The whole stored state now, to `restore` later (in-memory store only).
   * Opaque; waits for `ready`.
   */
  snapshot(): Promise<ApiServerSnapshot>
  /**
   * Puts a snapshot's state back. ResourceVersions keep increasing; open
   * watches end as after a compaction (410 Gone, or the stream ends), so no
   * watcher is left believing in objects that are gone. Resolves once reads
   * and the served custom resources reflect the restored state.
   */
  restore(snapshot: ApiServerSnapshot): Promise<void>
  /** Restores the state `ready` resolved with: the seeded `objects` and what start-up created; clears `activity`. */
  reset(): Promise<void>
  /** The requests and storage changes recorded since `ready` (`options.record`), for a test to assert on. */
  readonly activity: ActivityLog
  /**
   * The server's API as `system:admin` (in system:masters), each call a
   * request through the whole chain; `client.as(user)` acts as another user.
   */
  readonly client: ObjectClient
}

/** A server's stored state at one moment (`ApiServer.snapshot()`). Opaque. */
export type ApiServerSnapshot = MemorySnapshot


export function createApiServer(options: ApiServerOptions = {}, ports: Partial<ServerPorts> = {}): ApiServer {
  const logger = ports.logger ?? silentLogger
  const now = ports.now ?? (() => new Date())
  const hooks = new ServerHooks()
  // The phases of shutdown and the open watches that end with it.
  const lifecycle = new ServerLifecycle()
  const startedAt = now().getTime()
  // Parsed now, so that malformed seed text fails createApiServer rather than `ready`.
  const seeds = options.objects ? seedObjects(options.objects) : []
  const activity = new ActivityRecorder(options.record, now)
  const metrics = new Metrics(options.metrics)
  const tracer = ports.tracerProvider?.getTracer(TRACER_NAME)
  const storage = assembleStorage(options, ports, { logger, now, metrics, tracer, hooks })
  const template = beginFromTemplate(options, Object.keys(ports), {
    memory: storage.memory,
    encrypted: storage.transformers !== undefined,
    root: storage.root,
    files: ports.startupTemplates,
  })

  // The review resources and the registry ask the security chains, built once the registry they read exists.
  const late = new LateSecurity()
  const version = options.version ?? DEFAULT_VERSION
  const emulation = options.emulation ? { ...options.emulation, binary: serverMajorMinor(version) } : undefined
  const runtimeConfig = options.runtimeConfig ?? {}
  const catalogue = new Catalogue(applyEmulation(applyRuntimeConfig(builtinEntries(accessDecider(late.authorizer), late.reviews), runtimeConfig), emulation, runtimeConfig))
  const services = clusterServices(options)
  const registry = new Registry(catalogue, activity.recordingFactory(storage.factory), {
    root: storage.root,
    policy: registryPolicy(options, late, ports.admission, metrics),
    hooks: services.hooks,
  })
  const networkTransport = ports.proxyTransport ?? fetchProxyTransport()
  // Simulated nodes answer what the server asks their agents (pods/log, exec, attach) in process.
  const transport = options.nodes ? withSimulatedAgents(networkTransport, simulatedNodesOptions(options.nodes), now) : networkTransport
  // Alone on its store, the server runs its run-once controllers at once; sharing it, while it holds their lease.
  const membership = serverMembership(options.multiServer, {
    stores: registry,
    storage: storage.backend,
    root: storage.root,
    advertiseAddress: options.advertiseAddress ?? '127.0.0.1',
    ...(options.securePort ? { securePort: options.securePort } : {}),
    endpointReconcilerType: options.endpointReconcilerType ?? 'lease',
    now,
    logger,
    transport,
    versions: candidateVersions(version, emulation?.emulated),
  })
  // The server's own components read through one informer per resource version and write through the client.
  const informers = new InformerFactory((resource) => storageListWatch(() => registry.served(resource)), logger)
  hooks.onShutdown(() => informers.stop())
  const client = new ObjectClient(async (request, identity) => app.fetch(withMutableHeaders(request), { internalUser: identity }), LOOPBACK_IDENTITY)
  // Every stored resource's watch cache loads at start, as upstream's cachers do (in memory, at its first use); a custom resource's once served.
  const openStores = (entries: readonly ResourceEntry[]): void => entries.forEach((entry) => entry.virtualCreate || registry.storageOf(entry))
  openStores(catalogue.entries)
  catalogue.onChange(({ added }) => openStores(added))

  const webhookClient = ports.webhookClient ?? fetchWebhookClient()
  let securePort = options.securePort
  const externalAddress = (): string => externalAddressOf(options, securePort)
  const context = { registry, catalogue, stored: storedObjects(registry), informers, client, options, logger, now, webhookClient, metrics }
  const observeStoredObjects = (observer: ObjectObserver) => storage.factory.observeObjects(observer)
  const chains = assembleSecurity(late, { ...context, runOnce: membership.runOnce, observeStoredObjects, externalAddress, hooks })
  const serving = options.serving ?? {}
  // Priority and fairness replaces max-in-flight unless turned off (--enable-priority-and-fairness=false).
  const priorityAndFairness = serving.priorityAndFairness !== false
  const startupGiven = template.reused || ports.startupStored === true
  const bootstrap = registerBootstrap({ options, registry, membership, services, now, logger, hooks, priorityAndFairness, startupGiven })
  const crdController = startCrdController(registry, now, logger, {
    conversion: (crd, v) => customResourceConversion(crd, v, { client: webhookClient, resolveService: serviceResolver((resource, ns, name) => registry.served({ group: '', version: 'v1', resource }).get(ns, name)) }),
  })
  // Custom resources defined before a restart are served from the first request on.
  hooks.manage(CRD_INFORMER_SYNCED, crdController)
  // One controller here does what upstream's apiextensions informers and controllers (naming, establishing ...) do.
  hooks.alias(APIEXTENSIONS_INFORMERS, CRD_INFORMER_SYNCED)
  hooks.alias(APIEXTENSIONS_CONTROLLERS, CRD_INFORMER_SYNCED)
  const flowControl = priorityAndFairness ? new FlowControl(context.stored, informers, metrics, logger, now, flowControlLimits(options)) : undefined
  hooks.manage(FLOW_CONTROL_CONSUMER, flowControl)
  // The flow schemas written at start are in force, and their status written, before the first request.
  if (flowControl) hooks.onStart('bootstrap', FLOW_CONTROL_CONSUMER, () => flowControl.settle())
  if (flowControl) hooks.alias(FLOW_CONTROL_FILTER, FLOW_CONTROL_CONSUMER)
  // API aggregation: follows APIServices from the start, so that the first request after ready finds them.
  const aggregator = options.aggregation
    ? startAggregator(options.aggregation, { objects: { catalogue, stored: context.stored }, informers, transport, ...(options.authentication?.requestHeader ? { requestHeader: options.authentication.requestHeader } : {}), now, logger })
    : undefined
  if (aggregator) {
    // The local APIServices exist before the first request, as upstream's autoregister-completion check waits for.
    hooks.onStart('register', AUTOREGISTER_COMPLETION, () => aggregator.ready)
    // Its APIService informer, registration, availability, discovery and OpenAPI controllers start together.
    for (const hook of AGGREGATOR_HOOKS) hooks.alias(hook, AUTOREGISTER_COMPLETION)
    hooks.onShutdown(() => aggregator.stop())
  }
  const app = installServing({
    options, ports, registry, catalogue, chains, lifecycle, hooks, metrics, tracer, activity, flowControl, aggregator, membership, storage, externalAddress, logger, now,
    emulated: emulation, transport,
    checks: healthChecks({
      hooks,
      lifecycle,
      storage: ports.storageHealth ?? { healthz: revisionReadable(storage.backend), readyz: revisionReadable(storage.backend) },
      extra: storage.transformers?.healthChecks() ?? [],
      livezGracePeriodMs: serving.livezGracePeriodMs ?? 0,
      uptimeMs: () => now().getTime() - startedAt,
    }),
  })
  registerBackgroundWork({ options, registry, membership, client, informers, metrics, storageSizes: ports.storageSizes, now, logger, hooks, observeStoredObjects })
  // The embedder's objects, created through the API as system:admin once the server is otherwise up.
  if (seeds.length && !template.reused) hooks.onStart('seed', BOOTSTRAP_CONTROLLER, () => createSeedObjects(seeds, catalogue, (path, object) => seedRequest(app, path, object)))

  const snapshots = snapshotControls({ memory: storage.memory, factory: storage.factory, resyncCustomResources: () => crdController.resync(), activity, ready: () => ready })
  let started = false
  const ready = hooks.start().then(() => {
    snapshots.markStarted()
    // A start whose hooks were refused a write keeps no template: a later start from it would skip them.
    if (bootstrap.fixedObjectsWritten()) template.keep()
    activity.start()
    started = true
  })
  ready.catch((err) => logger.error({ err: String(err), check: hooks.firstFailure }, 'start-up failed'))

  return {
    catalogue,
    lifecycle,
    ready,
    ...snapshots,
    activity,
    client: client.as(ADMIN_IDENTITY),
    setSecurePort: (port) => {
      securePort = port
      return services.setSecurePort(port)
    },
    reloadAuthorization: (authorizers) => chains.authorization.reload(authorizers),
    async reloadAuthenticationConfiguration(config) {
      const replaced = chains.authentication.replaceJwtAuthenticators(config.jwt)
      if (!replaced) throw new Error('the server was started without JWT authenticators to replace (options.authentication.jwt)')
      await replaced
      logger.info({ issuers: config.jwt.map((a) => a.issuer.url) }, 'the JWT authenticators were replaced')
    },
    updateClientCAs: bootstrap.publishClientCAs,
    fixedObjectsWritten: bootstrap.fixedObjectsWritten,
    async fetch(request, connection) {
      const tooLarge = headerTooLarge(request, connection?.headerBytesLimit)
      if (tooLarge) return statusResponse(tooLarge)
      // A path with a malformed escape (`/api/v1/namespaces/%zz/configmaps`) is no request Go's server
      // parses: its own text, before authentication, for every verb and path.
      if (hasMalformedEscape(pathOfUrl(request.url))) return badRequestLineResponse()
      // Health checks answer during start-up and after it failed, naming what is not ready.
      if (!started && !isHealthPath(new URL(request.url).pathname)) {
        const failed = await ready.then(() => false, () => true)
        // Fail closed: without the parts that failed (indexes, policies, storage) no request is served.
        if (failed) return statusResponse(startupFailed(hooks.firstFailure ?? BOOTSTRAP_CONTROLLER))
      }
      const served = withMutableHeaders(request)
      if (connection?.headerLines) keepFirstLines(served.headers, connection.headerLines)
      return app.fetch(served, connection ? { connection } : {})
    },
    async shutdown() {
      lifecycle.shutdownInitiated = true
      await hooks.shutdown('components')
      await lifecycle.endWatches()
      await hooks.shutdown('flush')
      await hooks.shutdown('storage')
    },
  }
}

/** Where clients reach the server (upstream's ExternalAddress): issuer discovery's key set URI, /api's server address. */
function externalAddressOf(options: ApiServerOptions, securePort: number | undefined): string {
  const host = options.externalHostname ?? options.advertiseAddress ?? '127.0.0.1'
  return `${host.includes(':') ? `[${host}]` : host}${securePort ? `:${securePort}` : ''}`
}

/** The storage's health when the runtime gives no checks of its own: its current revision can be read. */
const revisionReadable = (backend: { currentRevision(): Promise<number> }) => async (): Promise<void> => void (await backend.currentRevision())
