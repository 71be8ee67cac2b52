/**
 * createApiServer: the whole server as one fetch handler. Runtimes add a
 * listener around it; tests call `fetch` directly.
 */
import type { HealthCheck } from './lifecycle/health-check.js'
import { installRoutes } from './api/routes.js'
import { startAggregator } from './aggregator/aggregator.js'
import { fetchProxyTransport } from './proxy/transport.js'
import { DEFAULT_VERSION, versionInfo, withEmulation } from './api/version.js'
import { withAuthenticatedGroup } from './authn/authenticator.js'
import { buildAuthentication } from './authn/chain.js'
import { accessDecider } from './authz/access-review.js'
import type { AuthorizerSpec } from './authz/authorizer-specs.js'
import type { Authorizer } from './authz/authorizer.js'
import { buildAuthorization } from './authz/modes.js'
import { type ClientCABundleUpdate, publishAuthenticationTrust, withClientCAs } from './controllers/authentication-trust.js'
import type { WriteAuthorization } from './authz/rbac/escalation.js'
import { LiveRbacIndex } from './authz/rbac/live-rbac-index.js'
import { RbacRuleResolver } from './authz/rbac/rule-resolver.js'
import { clusterServices } from './controllers/cluster-services.js'
import { startClusterRoleAggregation } from './controllers/clusterrole-aggregation.js'
import { startCrdController } from './controllers/custom-resource-definitions.js'
import { startGarbageCollector } from './controllers/garbage-collector.js'
import { apiServerId } from './controllers/apiserver-identity.js'
import { serverMembership } from './controllers/server-membership.js'
import { ENCRYPTION_LAST_RELOAD, ENCRYPTION_RELOADS } from './metrics/definitions.js'
import { ensureSystemNamespaces, startNamespaceLifecycle } from './controllers/namespace-lifecycle.js'
import { retryUntilDone } from './controllers/bootstrap-retry.js'
import { rbacBootstrapHook } from './controllers/rbac-bootstrap-roles.js'
import { systemPriorityClassesHook } from './controllers/system-priority-classes.js'
import type { LoadedAuthenticationConfiguration } from './config/authentication.js'
import { customResourceConversion } from './crd/conversion.js'
import { serviceResolver } from './crd/service-resolver.js'
import { fetchWebhookClient } from './crd/webhook-client.js'
import { buildChain, DEFAULT_IN_FLIGHT } from './http/chain.js'
import { headerTooLarge } from './machinery/limits.js'
import { withMutableHeaders } from './http/mutable-request.js'
import { statusResponse } from './http/respond.js'
import { flowControlBootstrapHook } from './flowcontrol/bootstrap.js'
import { FlowControl } from './flowcontrol/flow-control.js'
import { concatChains, lateBoundChain } from './admission/chain.js'
import { buildAdmission, defaultAdmissionPlugins } from './admission/plugins.js'
import { ServerLifecycle } from './lifecycle/lifecycle.js'
import { installProfilingRoutes } from './api/profiling.js'
import { installLogsRoutes } from './api/logs.js'
import { graceForStartup } from './api/health.js'
import type { ApiServerOptions } from './options/api-server-options.js'
import { Auditor } from './audit/auditor.js'
import type { ConnectionInfo, ServerPorts } from './ports.js'
import { silentLogger } from './logging/logger.js'
import { Metrics } from './metrics/metrics.js'
import { TRACER_NAME } from './tracing/context.js'
import { measuredAuthenticator } from './metrics/security-metrics.js'
import { measuredChain } from './metrics/admission-metrics.js'
import { watchMetrics } from './metrics/watch-metrics.js'
import { startStorageObjectCounter } from './metrics/storage-objects.js'
import { startStorageSizePoller } from './metrics/storage-size.js'
import { countTerminatedWatcher } from './metrics/terminated-watchers.js'
import { Registry } from './registry/registry.js'
import { controllerIdentity, LOOPBACK_IDENTITY } from './registry/identities.js'
import { selectControllers } from './controllers/workloads/catalogue.js'
import { clientEventRecorder } from './controllers/workloads/events.js'
import { InformerFactory } from './client/informer-factory.js'
import { storageListWatch } from './client/list-watch.js'
import { ObjectClient } from './client/object-client.js'
import { DEFAULT_STORAGE_PREFIX } from './registry/store.js'
import { builtinEntries } from './resources/builtin.js'
import { Catalogue, type ResourceEntry } from './resources/catalogue.js'
import { applyRuntimeConfig } from './resources/runtime-config.js'
import { applyEmulation, isEmulating } from './resources/emulation.js'
import { minorsBefore, serverMajorMinor } from './options/flags/versions.js'
import { candidateVersions } from './controllers/candidate-versions.js'
import { expiringFactory } from './storage/expiring.js'
import { singleStorage } from './storage/factory.js'
import { MemoryStorage } from './storage/memory.js'
import type { KeyTransformers } from './storage/value/key-transformers.js'
import { encryptionKeyTransformers } from './encryption/resource-transformers.js'
import { installEncryptionRewriteRoute } from './encryption/rewrite-route.js'
import { ServerStorage } from './storage/server-storage.js'
import { createSeedObjects, seedObjects } from './embedding/seed.js'
import { type ActivityLog, ActivityRecorder } from './embedding/activity.js'
import type { MemorySnapshot } from './storage/memory.js'
import { ADMIN_IDENTITY } from './options/api-server-options.js'
import { DEFAULT_WATCHER_BUFFER_SIZE } from './storage/watch-cache.js'
import {
  AUTOREGISTER_COMPLETION,
  BOOTSTRAP_CONTROLLER,
  CRD_INFORMER_SYNCED,
  FLOW_CONTROL_CONSUMER,
  INFORMER_SYNC,
  isHealthPath,
  StartupParts,
  startupFailed,
} from './lifecycle/startup-parts.js'

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

const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024

/**
 * The transformers the backends store through: the embedder's, or built from
 * `options.encryption` for the in-memory store. A storage given without them
 * would ignore the configuration, so that is refused (fail closed).
 */
function valueTransformers(options: ApiServerOptions, ports: Partial<ServerPorts>): KeyTransformers | undefined {
  if (ports.valueTransformers) return ports.valueTransformers
  if (!options.encryption) return undefined
  if (ports.storage || ports.storageFactory) {
    throw new Error('options.encryption needs ports.valueTransformers built from it: the given storage would store values unencrypted')
  }
  return encryptionKeyTransformers(options.encryption, ports.kmsClients ? { kms: ports.kmsClients } : {})
}

export function createApiServer(options: ApiServerOptions = {}, ports: Partial<ServerPorts> = {}): ApiServer {
  const logger = ports.logger ?? silentLogger
  const serving = options.serving ?? {}
  const now = ports.now ?? (() => new Date())
  const transformers = valueTransformers(options, ports)
  const backend = ports.storage ?? new MemoryStorage(transformers ? { transformerFor: (key) => transformers.forKey(key) } : {})
  // Parsed now, so that malformed seed text fails createApiServer rather than `ready`.
  const seeds = options.objects ? seedObjects(options.objects) : []
  // Snapshots are the in-memory store's: its data and revision, copied in an instant.
  const memory = !ports.storageFactory && backend instanceof MemoryStorage ? backend : undefined
  let seeded: MemorySnapshot | undefined
  const activity = new ActivityRecorder(options.record, now)
  const metrics = new Metrics(options.metrics)
  if (transformers) recordEncryptionReloads(transformers, metrics, options, now)
  const tracer = ports.tracerProvider?.getTracer(TRACER_NAME)
  // Which resource each cached prefix holds, to label the watches the cache ends as too slow.
  const cachedResources = new Map<string, { group: string; resource: string }>()
  const onWatcherTerminated = (prefix: string): void => {
    const resource = cachedResources.get(prefix)
    if (resource) countTerminatedWatcher(metrics, resource)
  }
  const root = (options.storagePrefix ?? DEFAULT_STORAGE_PREFIX).replace(/\/+$/, '')
  // --event-ttl on a backend that does not expire keys itself (memory, the embedded store).
  const expiring = options.eventTtlMs
    ? expiringFactory(ports.storageFactory ?? singleStorage(backend), [{ prefix: `${root}/events/`, ttlMs: options.eventTtlMs }], () => now().getTime(), (err) =>
        logger.warn({ err: String(err) }, 'cannot delete an expired event'),
      )
    : undefined
  // Each resource's backend, behind the watch cache unless --watch-cache or its --watch-cache-sizes turns it off.
  const storageFactory = new ServerStorage(expiring ?? ports.storageFactory ?? singleStorage(backend), {
    watchCache: options.watchCache ?? true,
    watchCacheSizes: options.watchCacheSizes ?? {},
    cacheOptions: { logger, onWatcherTerminated, ...(options.watcherBufferSize ? { watcherBufferSize: options.watcherBufferSize } : {}) },
    onCached: ({ group, resource, prefix }) => cachedResources.set(prefix, { group, resource }),
    metrics,
    ...(tracer ? { tracer } : {}),
    ...(transformers ? { transformers } : {}),
  })

  // The chains read the registry (RBAC objects, service accounts), and the registry's review resources
  // ask the chains: the reviews call them late, once both exist (below).
  const authorizer: Authorizer = { authorize: (attrs) => authorization.authorizer.authorize(attrs) }
  const entries = builtinEntries(accessDecider(authorizer), {
    rulesFor: (user, namespace) => authorization.rulesFor(user, namespace),
    // TokenReview asks for its own audiences, else the API's, as a request's token is asked.
    authenticateToken: async (token, audiences) => {
      const apiAudiences = authentication.apiAudiences.length ? authentication.apiAudiences : undefined
      const result = await authentication.tokens.authenticateToken(token, audiences ?? apiAudiences)
      if (!result) return {}
      if (!('user' in result)) return { error: result.error }
      return { user: withAuthenticatedGroup(result.user), ...(result.audiences ? { audiences: result.audiences } : {}) }
    },
  })
  const emulation = options.emulation ? { ...options.emulation, binary: serverMajorMinor(options.version ?? DEFAULT_VERSION) } : undefined
  const catalogue = new Catalogue(applyEmulation(applyRuntimeConfig(entries, options.runtimeConfig ?? {}), emulation, options.runtimeConfig ?? {}))
  // Writes of roles and bindings ask the whole chain (`escalate`, `bind`) and the RBAC rules of the writer.
  const writeAuthorization: WriteAuthorization = {
    authorizer,
    rbacRules: async () => {
      await rbac.start()
      return registryWordedRules
    },
  }
  const services = clusterServices(options)
  // The plugins read the registry and the registry runs them: its chain asks theirs, once built.
  const lateAdmission = lateBoundChain(() => admission.chain)
  const registry = new Registry(catalogue, activity.recordingFactory(storageFactory), {
    root,
    policy: {
      allowPrivileged: options.allowPrivileged ?? false,
      ...(options.multiServer?.coordinatedLeaderElection ? { coordinatedLeaderElection: true } : {}),
      deleteCollectionWorkers: options.deleteCollectionWorkers ?? 1,
      // The enabled plugins first, built once the registry they read exists (below), then the embedder's.
      admission: measuredChain(ports.admission ? concatChains(lateAdmission, ports.admission) : lateAdmission, metrics),
      authorization: writeAuthorization,
      // Watches the cache does not serve (it is off, or the resourceVersion is older than its window) are bounded alike.
      watcherBufferSize: options.watcherBufferSize ?? DEFAULT_WATCHER_BUFFER_SIZE,
      onWatcherTerminated: (resource) => countTerminatedWatcher(metrics, resource),
    },
    hooks: services.hooks,
  })
  // Alone on its store, the server runs its run-once controllers at once; sharing it, while it holds their lease.
  const membership = serverMembership(options.multiServer, {
    registry,
    storage: backend,
    root,
    advertiseAddress: options.advertiseAddress ?? '127.0.0.1',
    ...(options.securePort ? { securePort: options.securePort } : {}),
    endpointReconcilerType: options.endpointReconcilerType ?? 'lease',
    now,
    logger,
    transport: ports.proxyTransport ?? fetchProxyTransport(),
    versions: candidateVersions(options.version ?? DEFAULT_VERSION, emulation?.emulated),
  })
  // The server's own components read through one informer per resource and write through the client, as the API's clients do.
  const informers = new InformerFactory((resource) => storageListWatch(() => registry.served(resource)), logger)
  const client = new ObjectClient(async (request, identity) => app.fetch(withMutableHeaders(request), { internalUser: identity }), LOOPBACK_IDENTITY)
  const rbac = new LiveRbacIndex(informers)
  const registryWordedRules = new RbacRuleResolver(rbac.index, 'registry')
  // Every stored resource's storage is asked for now, so that its watch cache loads at start, as upstream's cachers do.
  const openStores = (entries: readonly ResourceEntry[]): void => {
    for (const entry of entries) if (!entry.virtualCreate) registry.store(entry)
  }
  openStores(catalogue.entries)
  // Custom resources are cached from the moment they are served.
  catalogue.onChange(({ added }) => openStores(added))

  const webhookClient = ports.webhookClient ?? fetchWebhookClient()
  const security = { registry, informers, client, options, logger, now, webhookClient, rbac, metrics }
  const authorization = buildAuthorization(options.authorizationConfiguration ?? options.authorizationModes ?? ['AlwaysAllow'], security)
  // Where clients reach the server (upstream's ExternalAddress): issuer discovery's key set URI, /api's server address.
  let securePort = options.securePort
  const externalAddress = (): string => {
    const host = options.externalHostname ?? options.advertiseAddress ?? '127.0.0.1'
    const hostText = host.includes(':') ? `[${host}]` : host
    return securePort ? `${hostText}:${securePort}` : hostText
  }
  const authentication = buildAuthentication(security, externalAddress)
  const admission = buildAdmission(
    options.admission?.plugins ?? defaultAdmissionPlugins(),
    { registry, informers, client, authorizer, webhookClient, options, logger, now, runOnce: membership.runOnce, metrics },
    options.admission?.configurations,
  )

  // The phases of shutdown and the open watches that end with it.
  const lifecycle = new ServerLifecycle()
  const startedAt = now().getTime()
  let started = false
  const priorityClassesHook = (options.bootstrapPriorityClasses ?? true) ? systemPriorityClassesHook(registry, now, logger) : undefined
  // Priority and fairness replaces max-in-flight unless turned off (--enable-priority-and-fairness=false).
  const priorityAndFairness = serving.priorityAndFairness !== false
  const flowControlHook = priorityAndFairness && (options.bootstrapFlowControl ?? true) ? flowControlBootstrapHook(registry, now, logger) : undefined
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000
  const inFlight = serving.maxInFlight ?? DEFAULT_IN_FLIGHT
  const flowControl = priorityAndFairness
    ? new FlowControl(registry, informers, metrics, logger, now, {
        serverConcurrencyLimit: inFlight.readOnly + inFlight.mutating,
        // Upstream's wait limit in a queue: a quarter of the request timeout, at most 15s.
        requestWaitLimitMs: Math.min(15_000, requestTimeoutMs / 4),
      })
    : undefined
  // The policy costs every start ~120 writes, so an embedder gets it by default only where it decides anything.
  const rbacAuthorizes = (options.authorizationConfiguration?.map((s) => s.type) ?? options.authorizationModes ?? []).includes('RBAC')
  const rbacPolicyHook = (options.bootstrapRbacPolicy ?? rbacAuthorizes) ? rbacBootstrapHook(registry, now, logger) : undefined
  const resolveService = serviceResolver(registry)
  // API aggregation: follows APIServices from the start, so that the first request after ready finds them.
  const aggregator = options.aggregation
    ? startAggregator(options.aggregation, {
        registry,
        informers,
        transport: ports.proxyTransport ?? fetchProxyTransport(),
        ...(options.authentication?.requestHeader ? { requestHeader: options.authentication.requestHeader } : {}),
        now,
        logger,
      })
    : undefined
  const nodeAgent = options.nodeAgent
    ? { registry, transport: ports.proxyTransport ?? fetchProxyTransport(), options: options.nodeAgent, ...(ports.checkProxyable ? { checkProxyable: ports.checkProxyable } : {}) }
    : undefined
  const crdController = startCrdController(registry, now, logger, {
    conversion: (crd, version) => customResourceConversion(crd, version, { client: webhookClient, resolveService }),
  })
  // What the extension-apiserver-authentication ConfigMap publishes: the options, with CA bundles rotated since.
  const trust = { options: options.authentication ?? {}, published: Promise.resolve() }
  // Upstream's system namespaces controller: a refused creation is logged and tried again, and readiness does not wait for it.
  const namespaceBootstrap = options.bootstrapNamespaces ?? true ? retryUntilDone('system namespaces', () => ensureSystemNamespaces(registry, now), logger) : undefined
  const systemNamespaces = namespaceBootstrap?.firstAttempt ?? Promise.resolve()
  // Each part of start-up under the readiness check upstream names it by, so that a failure says which.
  const startup = new StartupParts()
  const ready = (async () => {
    // The watch caches load alongside, so that reads at resourceVersion 0 are answered from memory from the start.
    await Promise.all([
      startup.part('poststarthook/start-system-namespaces-controller', systemNamespaces),
      // The leases live in kube-system; a lone server's first attempt takes the controllers' lease at once.
      startup.part('poststarthook/start-kube-apiserver-identity-lease-controller', systemNamespaces.then(() => membership.start())),
      ...[priorityClassesHook, flowControlHook, rbacPolicyHook].map((hook) => hook && startup.part(hook.check.name, hook.run())),
      storageFactory.loaded(),
      // Custom resources defined before a restart are served from the first request on.
      startup.part(CRD_INFORMER_SYNCED, crdController.ready),
      // An authenticator or authorizer that reads objects (RBAC, service accounts) answers once it has them.
      startup.part(INFORMER_SYNC, authentication.ready),
      startup.part(INFORMER_SYNC, authorization.ready),
      // A plugin that reads objects (quotas, limit ranges, policies) decides once it has them.
      startup.part(INFORMER_SYNC, admission.ready),
      startup.part(FLOW_CONTROL_CONSUMER, flowControl?.ready),
    ])
    // The flow schemas written at start are in force, and their status written, before the first request.
    await startup.part(FLOW_CONTROL_CONSUMER, flowControl?.settle())
    // Extension servers read whom to trust from kube-system, which exists by now.
    await publishAuthenticationTrust(registry, trust.options, now).catch((err: unknown) =>
      logger.warn({ err: String(err) }, 'cannot publish the extension-apiserver-authentication ConfigMap'),
    )
    await startup.part(BOOTSTRAP_CONTROLLER, services.start(registry, now, logger, membership))
    // A lone server's controllers (default service accounts, storage protection ...) have done their first pass.
    await startup.part(BOOTSTRAP_CONTROLLER, membership.controllersStarted())
    // The local APIServices exist before the first request, as upstream's autoregister-completion check waits for.
    await startup.part(AUTOREGISTER_COMPLETION, aggregator?.ready)
    if (seeds.length) {
      await startup.part(
        BOOTSTRAP_CONTROLLER,
        createSeedObjects(seeds, catalogue, (path, object) =>
          app.fetch(new Request(`http://in-process${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(object) }), {
            internalUser: ADMIN_IDENTITY,
          }),
        ),
      )
    }
    seeded = memory?.snapshot()
    activity.start()
    started = true
  })()
  ready.catch((err) => logger.error({ err: String(err), check: startup.firstFailure }, 'start-up failed'))
  membership.runOnce('namespace-controller', () => startNamespaceLifecycle(registry, now, logger))
  if (options.garbageCollector ?? true) membership.runOnce('garbage-collector', () => startGarbageCollector(registry, now, logger))
  if (options.clusterRoleAggregation ?? true)
    membership.runOnce('clusterrole-aggregation', () => {
      const aggregation = startClusterRoleAggregation(registry, now, logger)
      return () => aggregation.stop()
    })
  for (const controller of selectControllers(options.controllers ?? [])) {
    const controllerClient = client.as(controllerIdentity(controller.serviceAccount))
    const events = clientEventRecorder(controllerClient, controller.serviceAccount, now, logger)
    membership.runOnce(`${controller.name}-controller`, () => controller.start({ client: controllerClient, informers, events, now, logger }))
  }
  const stopObjectCounter = startStorageObjectCounter(registry, metrics, options.storageObjectCountPollMs ?? 60_000, logger)
  const stopSizePoller = startStorageSizePoller(ports.storageSizes, metrics, options.storageSizePollMs ?? 30_000, logger)

  const revisionReadable = async (): Promise<void> => void (await backend.currentRevision())
  const storageHealth = ports.storageHealth ?? { healthz: revisionReadable, readyz: revisionReadable }
  const base = (storageCheck: HealthCheck['check']): HealthCheck[] => [
    { name: 'ping', check: () => {} },
    { name: 'log', check: () => {} },
    { name: 'etcd', check: storageCheck },
    {
      name: BOOTSTRAP_CONTROLLER,
      check: () => {
        if (!started) throw new Error('not finished')
      },
    },
    ...(priorityClassesHook ? [priorityClassesHook.check] : []),
    ...(flowControlHook ? [flowControlHook.check] : []),
    ...(rbacPolicyHook ? [rbacPolicyHook.check] : []),
  ]
  // Upstream's readiness checks of the start-up parts that have no post-start hook of their own here.
  const startupChecks = [
    INFORMER_SYNC,
    'poststarthook/start-system-namespaces-controller',
    'poststarthook/start-kube-apiserver-identity-lease-controller',
    CRD_INFORMER_SYNCED,
    ...(flowControl ? [FLOW_CONTROL_CONSUMER] : []),
    ...(aggregator ? [AUTOREGISTER_COMPLETION] : []),
  ].map((name) => startup.check(name))
  // The KMS plugins' checks (upstream adds them to all three endpoints).
  const encryptionChecks = transformers?.healthChecks() ?? []
  const shutdownCheck: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (lifecycle.shutdownInitiated) throw new Error('process is shutting down')
    },
  }

  const watchCounts = watchMetrics(metrics)
  const auditor = options.audit ? new Auditor(options.audit.policy, options.audit.backends, metrics, logger, now) : undefined
  const app = buildChain({
    ...(auditor ? { auditor } : {}),
    ...(tracer ? { tracer } : {}),
    activity: activity.requestFilter(),
    logger,
    authenticator: measuredAuthenticator(authentication.request, metrics),
    authorizer: authorization.authorizer,
    embeddedIdentity: options.embeddedIdentity ?? null,
    requestTimeoutMs,
    lifecycle,
    ...(flowControl ? { flowControl } : {}),
    metrics,
    served: (info) => {
      const entry = catalogue.lookup(info.apiGroup, info.apiVersion, info.resource)
      return entry !== undefined && (info.subresource === '' || (entry.subresources ?? []).some((s) => s.name === info.subresource))
    },
    serving,
  })
  if ((serving.profiling ?? true) && ports.profiler) installProfilingRoutes(app, ports.profiler)
  // Encryption at rest configured: the rewrite after a rotation (docs/security.md, "Encryption at rest").
  if (transformers) {
    installEncryptionRewriteRoute(app, {
      logger,
      targets: () => storageFactory.storedResources().flatMap(({ resource, storage }) => (transformers.covers(resource) ? [{ ...resource, storage }] : [])),
    })
  }
  if (ports.logFiles) installLogsRoutes(app, ports.logFiles)
  installRoutes(app, {
    catalogue,
    tracer,
    ...(options.externalHostname || options.advertiseAddress ? { externalAddress } : {}),
    version: isEmulating(emulation)
      ? withEmulation(versionInfo(options.version ?? DEFAULT_VERSION), emulation.emulated, emulation.minCompatibility ?? minorsBefore(emulation.emulated, 1))
      : versionInfo(options.version ?? DEFAULT_VERSION),
    metrics,
    runtimeMetrics: ports.runtimeMetrics,
    checks: {
      healthz: [...base(() => storageHealth.healthz()), ...encryptionChecks],
      // --livez-grace-period: start-up work still under way does not make the server look dead.
      livez: [...base(() => storageHealth.healthz()), ...encryptionChecks].map((c) =>
        c.name.startsWith('poststarthook/') ? graceForStartup(c, serving.livezGracePeriodMs ?? 0, () => now().getTime() - startedAt) : c,
      ),
      readyz: [...base(() => storageHealth.readyz()), ...startupChecks, ...encryptionChecks, shutdownCheck],
    },
    handlerEnv: (user) => ({
      registry,
      user,
      now,
      maxBodyBytes: options.maxRequestBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      yamlDecoder: ports.yamlDecoder,
      minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      onShutdown: (end) => lifecycle.trackWatch(end),
      serviceAccountTokens: authentication.serviceAccountTokens,
      watchMetrics: watchCounts,
      nodeAgent,
      componentProbes: ports.componentProbes,
      servedRelease: emulation?.emulated ?? serverMajorMinor(options.version ?? DEFAULT_VERSION),
    }),
    issuerDiscovery: authentication.serviceAccountTokens,
    ...(aggregator ? { aggregator } : {}),
    ...(membership.peers ? { peers: membership.peers } : {}),
  })

  const inMemory = (): MemoryStorage => {
    if (!memory) throw new Error('snapshot, restore and reset need the in-memory store: the server was given its own storage')
    return memory
  }
  const restore = async (snapshot: MemorySnapshot): Promise<void> => {
    inMemory().restore(snapshot)
    // A consistent read waits until each watch cache has listed the restored state.
    await Promise.all(storageFactory.storedResources().map(({ resource, storage }) => storage.list(resource.prefix, { limit: 1 })))
    await crdController.resync()
  }

  return {
    catalogue,
    lifecycle,
    ready,
    async snapshot() {
      const store = inMemory()
      await ready
      return store.snapshot()
    },
    restore,
    async reset() {
      inMemory()
      await ready
      await restore(seeded!)
      activity.clear()
    },
    activity,
    client: client.as(ADMIN_IDENTITY),
    setSecurePort: (port) => {
      securePort = port
      return services.setSecurePort(port)
    },
    reloadAuthorization: (authorizers) => authorization.reload(authorizers),
    async reloadAuthenticationConfiguration(config) {
      const replaced = authentication.replaceJwtAuthenticators(config.jwt)
      if (!replaced) throw new Error('the server was started without JWT authenticators to replace (options.authentication.jwt)')
      await replaced
      logger.info({ issuers: config.jwt.map((a) => a.issuer.url) }, 'the JWT authenticators were replaced')
    },
    updateClientCAs(bundles) {
      trust.options = withClientCAs(trust.options, bundles)
      const current = trust.options
      // In order: two quick rotations end with the last bundles published.
      trust.published = trust.published.catch(() => {}).then(() => publishAuthenticationTrust(registry, current, now))
      return trust.published
    },
    async fetch(request, connection) {
      const tooLarge = headerTooLarge(request)
      if (tooLarge) return statusResponse(tooLarge)
      // Health checks answer during start-up and after it failed, naming what is not ready.
      if (!started && !isHealthPath(new URL(request.url).pathname)) {
        const failed = await ready.then(
          () => false,
          () => true,
        )
        // Fail closed: without the parts that failed (indexes, policies, storage) no request is served.
        if (failed) return statusResponse(startupFailed(startup.firstFailure ?? BOOTSTRAP_CONTROLLER))
      }
      return app.fetch(withMutableHeaders(request), connection ? { connection } : {})
    },
    async shutdown() {
      lifecycle.shutdownInitiated = true
      for (const hook of [namespaceBootstrap, priorityClassesHook, flowControlHook, rbacPolicyHook]) hook?.stop()
      crdController.stop()
      aggregator?.stop()
      authentication.stop()
      authorization.stop()
      admission.stop()
      informers.stop()
      flowControl?.stop()
      rbac.stop()
      services.stop()
      await membership.stop()
      stopObjectCounter()
      stopSizePoller()
      await lifecycle.endWatches()
      // What the audit backends still hold is written before the server is gone.
      await auditor?.shutdown()
      // The cache's storage watches end with the server; the storage itself stays open for its owner.
      storageFactory.stop()
      expiring?.stop()
    },
  }
}

/**
 * `--encryption-provider-config-automatic-reload` in /metrics as upstream
 * counts it: per outcome, labelled with a hash of the server's id.
 */
function recordEncryptionReloads(transformers: KeyTransformers, metrics: Metrics, options: ApiServerOptions, now: () => Date): void {
  const idHash = (async () => {
    const id = await apiServerId(options.multiServer?.hostname ?? 'localhost', options.advertiseAddress ?? '127.0.0.1', options.securePort, options.multiServer?.instance)
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(id)))
    return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}`
  })()
  transformers.onReload((ok) => {
    const status = ok ? 'success' : 'failure'
    const at = now().getTime() / 1000
    void idHash.then((apiserver_id_hash) => {
      metrics.addCounter(ENCRYPTION_RELOADS.name, ENCRYPTION_RELOADS.help, { apiserver_id_hash, status })
      metrics.setGauge(ENCRYPTION_LAST_RELOAD.name, ENCRYPTION_LAST_RELOAD.help, { apiserver_id_hash, status }, at)
    })
  })
}
