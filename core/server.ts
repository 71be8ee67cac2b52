/**
 * createApiServer: the whole server as one fetch handler. Runtimes add a
 * listener around it; tests call `fetch` directly.
 */
import type { HealthCheck } from './api/health.js'
import { installRoutes } from './api/routes.js'
import { DEFAULT_VERSION, versionInfo } from './api/version.js'
import { withAuthenticatedGroup } from './authn/authenticator.js'
import { buildAuthentication } from './authn/chain.js'
import { accessDecider } from './authz/access-review.js'
import type { AuthorizerSpec } from './authz/authorizer-specs.js'
import type { Authorizer } from './authz/authorizer.js'
import { buildAuthorization } from './authz/modes.js'
import { clusterServices } from './controllers/cluster-services.js'
import { startCrdController } from './controllers/custom-resource-definitions.js'
import { startGarbageCollector } from './controllers/garbage-collector.js'
import { ensureSystemNamespaces, startNamespaceLifecycle } from './controllers/namespace-lifecycle.js'
import { systemPriorityClassesHook } from './controllers/system-priority-classes.js'
import { customResourceConversion } from './crd/conversion.js'
import { serviceResolver } from './crd/service-resolver.js'
import { fetchWebhookClient } from './crd/webhook-client.js'
import { buildChain } from './http/chain.js'
import { ServerLifecycle } from './lifecycle/lifecycle.js'
import { installProfilingRoutes } from './api/profiling.js'
import { graceForStartup } from './api/health.js'
import { ADMIN_IDENTITY, type ApiServerOptions } from './options/api-server-options.js'
import type { ConnectionInfo, ServerPorts } from './ports.js'
import { silentLogger } from './ports.js'
import { Metrics } from './metrics/metrics.js'
import { startStorageObjectCounter } from './metrics/storage-objects.js'
import { countTerminatedWatcher } from './metrics/terminated-watchers.js'
import { Registry } from './registry/registry.js'
import { DEFAULT_STORAGE_PREFIX } from './registry/store.js'
import { builtinEntries } from './resources/builtin.js'
import { Catalogue, type ResourceEntry } from './resources/catalogue.js'
import { applyRuntimeConfig } from './resources/runtime-config.js'
import type { Storage } from './storage/interface.js'
import { MemoryStorage } from './storage/memory.js'
import { WatchCache } from './storage/watch-cache.js'
import { watchCacheEnabled } from './storage/watch-cache-sizes.js'

export interface ApiServer {
  /** Answers one request. `connection` is what the transport knows; omit it only for in-process calls. */
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>
  /** Resolves when start-up work (the system namespaces, the watch caches' first load) is done. */
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
}

const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024

export function createApiServer(options: ApiServerOptions = {}, ports: Partial<ServerPorts> = {}): ApiServer {
  const logger = ports.logger ?? silentLogger
  const serving = options.serving ?? {}
  const now = ports.now ?? (() => new Date())
  const backend = ports.storage ?? new MemoryStorage()
  const metrics = new Metrics()
  // Which resource each cached prefix holds, to label the watches the cache ends as too slow.
  const cachedResources = new Map<string, { group: string; resource: string }>()
  const onWatcherTerminated = (prefix: string): void => {
    const resource = cachedResources.get(prefix)
    if (resource) countTerminatedWatcher(metrics, resource)
  }
  const watchCache =
    (options.watchCache ?? true)
      ? new WatchCache(backend, { logger, onWatcherTerminated, ...(options.watcherBufferSize ? { watcherBufferSize: options.watcherBufferSize } : {}) })
      : undefined
  const storage: Storage = watchCache ?? backend

  // The chains read the registry (RBAC objects, service accounts), and the registry's review resources
  // ask the chains: the reviews call them late, once both exist (below).
  const authorizer: Authorizer = { authorize: (attrs) => authorization.authorizer.authorize(attrs) }
  const entries = builtinEntries(accessDecider(authorizer), {
    authenticateToken: async (token) => {
      const result = await authentication.tokens.authenticateToken(token)
      return result && 'user' in result ? withAuthenticatedGroup(result.user) : undefined
    },
  })
  const catalogue = new Catalogue(applyRuntimeConfig(entries, options.runtimeConfig ?? {}))
  const root = (options.storagePrefix ?? DEFAULT_STORAGE_PREFIX).replace(/\/+$/, '')
  const services = clusterServices(options, storage, root)
  const registry = new Registry(catalogue, services.storage, root, {
    allowPrivileged: options.allowPrivileged ?? false,
    deleteCollectionWorkers: options.deleteCollectionWorkers ?? 1,
  })
  if (watchCache) {
    // One cache per stored resource, at the prefix the registry stores it under; 0 in --watch-cache-sizes opts out.
    const sizes = options.watchCacheSizes ?? {}
    const cache = (entries: readonly ResourceEntry[]): void => {
      for (const entry of entries) {
        if (!entry.virtualCreate && watchCacheEnabled(sizes, entry.group, entry.resource)) {
          const prefix = registry.store(entry).prefix('')
          cachedResources.set(prefix, { group: entry.group, resource: entry.resource })
          watchCache.cacheResource(prefix)
        }
      }
    }
    cache(catalogue.entries)
    // Custom resources are cached from the moment they are served.
    catalogue.onChange(({ added }) => cache(added))
  }

  const webhookClient = ports.webhookClient ?? fetchWebhookClient()
  const security = { registry, options, logger, now, webhookClient }
  const authorization = buildAuthorization(options.authorizationConfiguration ?? options.authorizationModes ?? ['AlwaysAllow'], security)
  const authentication = buildAuthentication(security)

  // The phases of shutdown and the open watches that end with it.
  const lifecycle = new ServerLifecycle()
  const startedAt = now().getTime()
  let started = false
  const priorityClassesHook = (options.bootstrapPriorityClasses ?? true) ? systemPriorityClassesHook(registry, now) : undefined
  const resolveService = serviceResolver(registry)
  const crdController = startCrdController(registry, now, logger, {
    conversion: (crd, version) => customResourceConversion(crd, version, { client: webhookClient, resolveService }),
  })
  const ready = (async () => {
    // The watch caches load alongside, so that reads at resourceVersion 0 are answered from memory from the start.
    await Promise.all([
      options.bootstrapNamespaces ?? true ? ensureSystemNamespaces(registry, now) : undefined,
      priorityClassesHook?.run(),
      watchCache?.loaded(),
      // Custom resources defined before a restart are served from the first request on.
      crdController.ready,
      // An authenticator or authorizer that reads objects (RBAC, service accounts) answers once it has them.
      authentication.ready,
      authorization.ready,
    ])
    await services.start(registry, now, logger)
    started = true
  })()
  ready.catch((err) => logger.error({ err: String(err) }, 'start-up failed'))
  const stopNamespaceLifecycle = startNamespaceLifecycle(registry, now, logger)
  const stopGarbageCollector = (options.garbageCollector ?? true) ? startGarbageCollector(registry, now, logger) : () => {}
  const stopObjectCounter = startStorageObjectCounter(registry, metrics, options.storageObjectCountPollMs ?? 60_000, logger)

  const revisionReadable = async (): Promise<void> => void (await storage.currentRevision())
  const storageHealth = ports.storageHealth ?? { healthz: revisionReadable, readyz: revisionReadable }
  const base = (storageCheck: HealthCheck['check']): HealthCheck[] => [
    { name: 'ping', check: () => {} },
    { name: 'log', check: () => {} },
    { name: 'etcd', check: storageCheck },
    {
      name: 'poststarthook/bootstrap-controller',
      check: () => {
        if (!started) throw new Error('not finished')
      },
    },
    ...(priorityClassesHook ? [priorityClassesHook.check] : []),
  ]
  const shutdownCheck: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (lifecycle.shutdownInitiated) throw new Error('process is shutting down')
    },
  }

  const app = buildChain({
    logger,
    authenticator: authentication.request,
    authorizer: authorization.authorizer,
    embeddedIdentity: options.embeddedIdentity === undefined ? ADMIN_IDENTITY : options.embeddedIdentity,
    requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    lifecycle,
    metrics,
    serving,
  })
  if ((serving.profiling ?? true) && ports.profiler) installProfilingRoutes(app, ports.profiler)
  installRoutes(app, {
    catalogue,
    version: versionInfo(options.version ?? DEFAULT_VERSION),
    metrics,
    checks: {
      healthz: base(() => storageHealth.healthz()),
      // --livez-grace-period: start-up work still under way does not make the server look dead.
      livez: base(() => storageHealth.healthz()).map((c) =>
        c.name.startsWith('poststarthook/') ? graceForStartup(c, serving.livezGracePeriodMs ?? 0, () => now().getTime() - startedAt) : c,
      ),
      readyz: [...base(() => storageHealth.readyz()), shutdownCheck],
    },
    handlerEnv: (user) => ({
      registry,
      user,
      now,
      maxBodyBytes: options.maxRequestBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      onShutdown: (end) => lifecycle.trackWatch(end),
    }),
  })

  return {
    catalogue,
    lifecycle,
    ready,
    setSecurePort: (port) => services.setSecurePort(port),
    reloadAuthorization: (authorizers) => authorization.reload(authorizers),
    async fetch(request, connection) {
      if (!started) await ready.catch(() => {})
      return app.fetch(request, connection ? { connection } : {})
    },
    async shutdown() {
      lifecycle.shutdownInitiated = true
      stopNamespaceLifecycle()
      stopGarbageCollector()
      crdController.stop()
      authentication.stop()
      authorization.stop()
      services.stop()
      stopObjectCounter()
      await lifecycle.endWatches()
      // The cache's storage watches end with the server; the storage itself stays open for its owner.
      watchCache?.stop()
    },
  }
}
