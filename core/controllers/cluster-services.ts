/**
 * The Services side of a server, in one place for createApiServer: the
 * allocation of cluster IPs and node ports (the services' store hooks), and
 * the two controllers that keep cluster objects (the `kubernetes` Service and
 * its endpoints; every namespace's `default` ServiceAccount).
 */
import type { Logger } from '../logging/logger.js'
import type { StoredResources } from './stored-resources.js'
import { allocationHooks, rebuildAllocations, ServiceAllocator } from '../resources/core/service-allocation.js'
import { services } from '../resources/core/services.js'
import { startDefaultServiceAccounts } from './default-serviceaccount.js'
import { type KubernetesServiceController, startKubernetesService } from './kubernetes-service.js'
import type { ServerMembership } from './server-membership.js'

export interface ClusterServices {
  /** The store hooks by `group/resource`: services' writes take and give back allocations. */
  readonly hooks: ReadonlyMap<string, ReturnType<typeof allocationHooks>>
  readonly allocator: ServiceAllocator
  /** Rebuilds the allocations from the stored services, then starts the controllers. Call once the system namespaces exist. */
  start(stores: StoredResources, now: () => Date, logger: Logger, membership: Pick<ServerMembership, 'runOnce' | 'endpoints'>): Promise<void>
  setSecurePort(port: number): Promise<void>
  stop(): void
}

/** The server's options the Services side reads (ApiServerOptions' fields of the same names). */
export interface ClusterServicesOptions {
  serviceClusterIPRange?: string[]
  serviceNodePortRange?: { first: number; last: number }
  advertiseAddress?: string
  securePort?: number
  platformServiceNodePort?: number
  endpointReconcilerType?: 'lease' | 'master-count' | 'none'
  kubernetesServiceController?: boolean
  serviceAccountsController?: boolean
}

/** Throws ServiceRangeError for a range that is no CIDR. */
export function clusterServices(options: ClusterServicesOptions): ClusterServices {
  const allocator = new ServiceAllocator(options.serviceClusterIPRange, options.serviceNodePortRange)
  let kubernetesService: KubernetesServiceController | undefined
  let stopped = false
  return {
    hooks: new Map([[`${services.group}/${services.resource}`, allocationHooks(allocator)]]),
    allocator,
    async start(stores, now, logger, membership) {
      await rebuildAllocations(stores.store(services), allocator)
      if (stopped) return
      // Upstream's service account controller runs in the controller manager: once in a cluster.
      if (options.serviceAccountsController ?? true) membership.runOnce('serviceaccount-controller', () => startDefaultServiceAccounts(stores, now, logger))
      if (options.kubernetesServiceController ?? true) {
        kubernetesService = startKubernetesService(
          stores,
          {
            clusterIP: allocator.kubernetesServiceIP(),
            advertiseAddress: options.advertiseAddress ?? '127.0.0.1',
            nodePort: options.platformServiceNodePort ?? 0,
            manageEndpoints: (options.endpointReconcilerType ?? 'lease') !== 'none',
            ...(membership.endpoints ? { leases: membership.endpoints } : {}),
          },
          now,
          logger,
        )
        if (options.securePort) await kubernetesService.setSecurePort(options.securePort)
      }
    },
    async setSecurePort(port) {
      await kubernetesService?.setSecurePort(port)
    },
    stop() {
      stopped = true
      kubernetesService?.stop()
    },
  }
}
