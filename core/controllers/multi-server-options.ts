/**
 * What a server does to behave as one of several on a shared store
 * (docs/operations.md, "Several servers"). The daemon fills it from the flags.
 */
import type { IdentityLeaseTimings } from './apiserver-identity.js'
import type { EndpointLeaseTimings } from './endpoint-leases.js'
import type { LeaderElectionTimings } from './leader-election.js'
import type { PeerProxyOptions } from '../peers/peers.js'

export interface MultiServerOptions {
  /** The host name in the server's id (`apiserver-<hash>`) and in its identity lease's `kubernetes.io/hostname` label. */
  hostname: string
  /**
   * Added to the server's id when several servers share host name, address
   * and port (the worker processes of one daemon), so each has its own.
   * @default none: the id of host, address and port
   */
  instance?: string
  /**
   * The store is shared with other servers (etcd): the controllers that must
   * run once run under leader election, and the `kubernetes` endpoints list
   * every live server (`--endpoint-reconciler-type=lease`). Otherwise they run at once.
   * @default false
   */
  sharedStorage?: boolean
  /** Publish the identity lease. @default true */
  identityLease?: boolean
  /** @default DEFAULT_IDENTITY_LEASE */
  identityLeaseTimings?: Partial<IdentityLeaseTimings>
  /** The `--coordinated-leadership-*` flags. @default DEFAULT_LEADER_ELECTION */
  leaderElection?: Partial<LeaderElectionTimings>
  /**
   * Coordinated leader election (feature gate CoordinatedLeaderElection):
   * the controllers' lease goes to the candidate of the oldest version
   * (core/controllers/coordinated-election.ts). Needs LeaseCandidate served
   * (`--runtime-config=coordination.k8s.io/v1alpha2=true`). @default false
   */
  coordinatedLeaderElection?: boolean
  /** @default DEFAULT_ENDPOINT_LEASE */
  endpointLeases?: Partial<EndpointLeaseTimings>
  /**
   * The peer proxy (feature gate UnknownVersionInteroperabilityProxy): a
   * request for a resource this server does not serve goes to a live peer
   * that does. Needs the proxy client certificate; peers are verified with
   * `caBundle` (`--peer-ca-file`). @default off
   */
  peerProxy?: PeerProxyOptions
}
