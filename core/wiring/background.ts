/**
 * The server's background work: the controllers that run once across
 * servers sharing a store (the namespace controller, the garbage collector,
 * ClusterRole aggregation, and the workload controllers asked for), and the
 * pollers behind the storage metrics.
 */
import { DEFAULT_VERSION } from '../api/version.js'
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import { startClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js'
import { startGarbageCollectorWhenNeeded } from '../controllers/garbage-collector-on-demand.js'
import type { ObserveStoredObjects } from '../storage/server-storage.js'
import { startNamespaceLifecycle } from '../controllers/namespace-lifecycle.js'
import type { ServerMembership } from '../controllers/server-membership.js'
import { selectControllers } from '../controllers/workloads/catalogue.js'
import { clientEventRecorder } from '../controllers/workloads/events.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import type { Logger } from '../logging/logger.js'
import type { Metrics } from '../metrics/metrics.js'
import { startStorageObjectCounter } from '../metrics/storage-objects.js'
import { type StorageSizes, startStorageSizePoller } from '../metrics/storage-size.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import { controllerIdentity } from '../machinery/identities.js'
import { simulatedNodesOptions, startSimulation } from '../simulation/index.js'
import type { Registry } from '../registry/registry.js'

export interface BackgroundWiring {
  readonly options: ApiServerOptions
  readonly registry: Registry
  readonly membership: ServerMembership
  readonly client: ObjectClient
  readonly informers: InformerFactory
  /** What the garbage collector watches for before it starts (the watch caches' objects); undefined: it starts at once. */
  readonly observeStoredObjects?: ObserveStoredObjects
  readonly metrics: Metrics
  readonly storageSizes: StorageSizes | undefined
  readonly now: () => Date
  readonly logger: Logger
  readonly hooks: ServerHooks
}

export function registerBackgroundWork(wiring: BackgroundWiring): void {
  const { options, registry, membership, client, informers, metrics, storageSizes, now, logger, hooks, observeStoredObjects } = wiring
  const { runOnce } = membership
  runOnce('namespace-controller', () => startNamespaceLifecycle(registry, now, logger))
  if (options.garbageCollector ?? true) runOnce('garbage-collector', () => startGarbageCollectorWhenNeeded(registry, now, logger, observeStoredObjects))
  if (options.clusterRoleAggregation ?? true) {
    // The first pass of the aggregation this server runs, once it runs it.
    let firstPass: Promise<void> | undefined
    // It starts once the rest of start-up is through, as upstream's kube-controller-manager starts once the server
    // is healthy: its first pass finds the bootstrap policy and the seeded roles whole, and writes each aggregated
    // role once.
    runOnce('clusterrole-aggregation', () => {
      let aggregation: ReturnType<typeof startClusterRoleAggregation> | undefined
      let stopped = false
      firstPass = hooks.after('seed').then(() => {
        if (stopped) return undefined
        aggregation = startClusterRoleAggregation({ client, informers, catalogue: registry.catalogue, logger })
        return aggregation.firstPass()
      })
      return () => {
        stopped = true
        aggregation?.stop()
      }
    })
    // Start-up ends with `admin`, `edit` and `view` filled where the aggregation runs here (alone on the store, or
    // leading from the start): a client's first request finds them whole, where upstream's would race the
    // controller-manager, and a start-up template (or reset()) holds them as they stay. A server that does not
    // lead leaves them to the one that does.
    hooks.onStart('aggregate', undefined, () => firstPass)
  }
  // Each workload controller asked for acts as its own service account, as kube-controller-manager runs it.
  const selection = options.controllers ?? []
  for (const controller of selectControllers(selection)) {
    if (controller.needsRootCA && options.rootCA === undefined) {
      // Under `*` it is left out, as there is nothing to publish; named, it would leave its ConfigMaps never made.
      if (selection.includes(controller.name)) throw new Error(`--controllers: "${controller.name}" needs the CA bundle to publish (options.rootCA)`)
      continue
    }
    const controllerClient = client.as(controllerIdentity(controller.serviceAccount), `kube-controller-manager/${controller.serviceAccount}`)
    const events = clientEventRecorder(controllerClient, controller.eventComponent ?? controller.serviceAccount, now, logger)
    runOnce(`${controller.name}-controller`, () => controller.start({ client: controllerClient, informers, events, now, logger, ...(options.rootCA !== undefined ? { rootCA: options.rootCA } : {}) }))
  }
  if (options.nodes !== undefined) {
    const simulated = simulatedNodesOptions(options.nodes)
    // The nodes register once the bootstrap policy grants the node and scheduler accounts their rights, as kubelets retry until it does.
    if (simulated.count > 0)
      runOnce('simulated-nodes', async () => {
        await hooks.after('load')
        const modes = options.authorizationConfiguration?.map((a) => a.type) ?? options.authorizationModes ?? ['AlwaysAllow']
        const nodeAuthorizer = modes.includes('Node') || modes.includes('AlwaysAllow')
        return startSimulation({ client, informers, now, logger, nodeAuthorizer, kubeletVersion: options.version ?? DEFAULT_VERSION }, simulated)
      })
  }
  hooks.onShutdown(startStorageObjectCounter(registry, metrics, options.storageObjectCountPollMs ?? 60_000, logger, hooks.after('aggregate')))
  hooks.onShutdown(startStorageSizePoller(storageSizes, metrics, options.storageSizePollMs ?? 30_000, logger))
}
