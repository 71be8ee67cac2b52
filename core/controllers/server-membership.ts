/**
 * One server among several on a shared store, in one place for
 * createApiServer: its id and identity lease, the leader election that
 * decides where the run-once controllers run, and its record for the
 * `kubernetes` endpoints. A server alone on its store runs its controllers
 * at once and writes no leases but its identity lease.
 */
import type { MultiServerOptions } from './multi-server-options.js'
import type { Logger } from '../logging/logger.js'
import type { StoredResources } from './stored-resources.js'
import type { Storage } from '../storage/interface.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { PeerDirectory } from '../peers/peer-discovery.js'
import { joinHostPort } from '../peers/peer-endpoints.js'
import type { PeerForward } from '../peers/peer-transport.js'
import { type RunningPeers, startPeers } from '../peers/peers.js'
import { apiServerId, DEFAULT_IDENTITY_LEASE, startIdentityLease } from './apiserver-identity.js'
import { DEFAULT_ENDPOINT_LEASE, type EndpointLeases, endpointLeases } from './endpoint-leases.js'
import { DEFAULT_LEADER_ELECTION, type LeaderElection, startLeaderElection } from './leader-election.js'
import { ControllerSet, type RunOnce } from './run-once.js'
import { COORDINATOR_LEASE, startCoordinator, startLeaseCandidate } from './coordinated-election.js'

/** The Lease the in-process controllers are elected with; distinct from kube-controller-manager's, which may run beside. */
export const CONTROLLERS_LEASE = 'kube-apiserver-controllers'

export interface ServerMembership {
  readonly runOnce: RunOnce
  /** Set when the `kubernetes` endpoints list every live server. */
  readonly endpoints?: { leases: EndpointLeases; intervalMs: number }
  /** With the peer proxy on: the peers and how to reach them, once started (before, no peer is known). */
  readonly peers?: { directory: Pick<PeerDirectory, 'serving'>; forward: PeerForward }
  /** Starts the leases once kube-system exists. */
  start(): Promise<void>
  /** Alone on its store: resolves once the run-once controllers have started. Sharing it: at once (they start with the lease). */
  controllersStarted(): Promise<void>
  stop(): Promise<void>
}

export interface MembershipContext {
  stores: StoredResources
  storage: Storage
  root: string
  advertiseAddress: string
  securePort?: number
  endpointReconcilerType: 'lease' | 'master-count' | 'none'
  now: () => Date
  logger: Logger
  /** How the peer proxy reaches peers. */
  transport: ProxyTransport
  /** The versions a LeaseCandidate announces (`1.32.0`; the emulated one, else the same). */
  versions: { binary: string; emulation: string }
}

export function serverMembership(options: MultiServerOptions | undefined, ctx: MembershipContext): ServerMembership {
  const controllers = new ControllerSet(ctx.logger)
  const shared = options?.sharedStorage ?? false
  if (!shared) controllers.startAll()
  const endpointTimings = { ...DEFAULT_ENDPOINT_LEASE, ...options?.endpointLeases }
  const endpoints =
    shared && ctx.endpointReconcilerType === 'lease'
      ? { leases: endpointLeases(ctx.storage, ctx.root, ctx.advertiseAddress, endpointTimings, ctx.now), intervalMs: endpointTimings.intervalMs }
      : undefined
  let election: LeaderElection | undefined
  let coordinator: LeaderElection | undefined
  let stopCandidate: (() => Promise<void>) | undefined
  let stopIdentity: (() => void) | undefined
  let stopped = false
  let running: RunningPeers | undefined
  const peerOptions = options?.peerProxy
  const peers = peerOptions
    ? {
        directory: { serving: (group: string, version: string, resource: string) => running?.directory.serving(group, version, resource) ?? [] },
        forward: (...args: Parameters<PeerForward>) => {
          if (!running) throw new Error('the peer proxy has not started')
          return running.forward(...args)
        },
      }
    : undefined
  // Coordinated: this server is a candidate under a name that is also a valid object name, and may be the coordinator.
  const startCoordinated = async (id: string, timings: typeof DEFAULT_LEADER_ELECTION): Promise<void> => {
    const identity = `${id}-${crypto.randomUUID()}`
    const durationSeconds = Math.max(1, Math.round(timings.leaseDurationMs / 1000))
    stopCandidate = startLeaseCandidate(
      ctx.stores,
      { identity, leaseName: CONTROLLERS_LEASE, binaryVersion: ctx.versions.binary, emulationVersion: ctx.versions.emulation, renewIntervalMs: timings.leaseDurationMs },
      ctx.now,
      ctx.logger,
    )
    const coordinatorSet = new ControllerSet(ctx.logger)
    coordinatorSet.register(COORDINATOR_LEASE, () =>
      startCoordinator(
        ctx.stores,
        { leaseName: CONTROLLERS_LEASE, leaseDurationSeconds: durationSeconds, periodMs: timings.retryPeriodMs, candidateValidityMs: 3 * timings.leaseDurationMs },
        ctx.now,
        ctx.logger,
      ),
    )
    coordinator = startLeaderElection(ctx.stores, coordinatorSet, { ...timings, leaseName: COORDINATOR_LEASE, identity }, ctx.now, ctx.logger)
    election = startLeaderElection(ctx.stores, controllers, { ...timings, leaseName: CONTROLLERS_LEASE, identity, coordinated: true }, ctx.now, ctx.logger)
    await coordinator.firstAttempt
  }
  return {
    runOnce: controllers.register,
    ...(endpoints ? { endpoints } : {}),
    ...(peers ? { peers } : {}),
    async start() {
      if (!options) return
      const id = await apiServerId(options.hostname, ctx.advertiseAddress, ctx.securePort, options.instance)
      const holderIdentity = `${id}_${crypto.randomUUID()}`
      if (stopped) return
      if (options.identityLease ?? true)
        stopIdentity = startIdentityLease(
          ctx.stores,
          { ...DEFAULT_IDENTITY_LEASE, ...options.identityLeaseTimings, id, holderIdentity, hostname: options.hostname },
          ctx.now,
          ctx.logger,
        )
      if (peerOptions) {
        const address = peerOptions.address ?? joinHostPort(ctx.advertiseAddress, ctx.securePort ?? 443)
        running = startPeers(peerOptions, ctx, id, address)
      }
      if (!shared) return
      const timings = { ...DEFAULT_LEADER_ELECTION, ...options.leaderElection }
      if (options.coordinatedLeaderElection) {
        await startCoordinated(id, timings)
        return
      }
      election = startLeaderElection(
        ctx.stores,
        controllers,
        {
          ...DEFAULT_LEADER_ELECTION,
          ...options.leaderElection,
          leaseName: CONTROLLERS_LEASE,
          identity: holderIdentity,
          // An earlier run of this server (same host, address and port) is gone: its lease need not be waited out.
          earlierSelf: (holder) => holder.startsWith(`${id}_`),
        },
        ctx.now,
        ctx.logger,
      )
      await election.firstAttempt
    },
    controllersStarted: () => (shared ? Promise.resolve() : controllers.started()),
    async stop() {
      stopped = true
      stopIdentity?.()
      await coordinator?.stop()
      await stopCandidate?.()
      await running?.stop()
      if (election) await election.stop()
      else controllers.stopAll()
      await endpoints?.leases.remove().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot remove the endpoint lease'))
    },
  }
}
