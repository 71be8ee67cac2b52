/**
 * The daemon's part in a cluster of servers: its host name for the server
 * id, whether its store is shared (etcd: other servers may use it), and the
 * `--coordinated-leadership-*` timings of the controllers' leader election.
 */
import { hostname } from 'node:os'
import { featureEnabled, type FlagValues } from '../../core/options/flags/index.js'
import type { MultiServerOptions } from '../../core/options/multi-server-options.js'

type MultiServerFlags = Pick<
  FlagValues,
  | 'kvstore-servers'
  | 'coordinated-leadership-lease-duration'
  | 'coordinated-leadership-renew-deadline'
  | 'coordinated-leadership-retry-period'
  | 'feature-gates'
  | 'emulated-version'
  | 'version'
>

export function multiServerOptions(values: MultiServerFlags): MultiServerOptions {
  return {
    hostname: hostname().toLowerCase(),
    // The embedded store belongs to one process; etcd may be shared by several servers.
    sharedStorage: values['kvstore-servers'].length > 0,
    identityLease: featureEnabled(values, 'APIServerIdentity'),
    leaderElection: {
      leaseDurationMs: values['coordinated-leadership-lease-duration'],
      renewDeadlineMs: values['coordinated-leadership-renew-deadline'],
      retryPeriodMs: values['coordinated-leadership-retry-period'],
    },
  }
}

/** `--event-ttl` for the embedded store, which expires nothing itself; etcd's leases expire events (storage/open.ts). */
export function eventExpiry(values: Pick<FlagValues, 'kvstore-servers' | 'event-ttl'>): { eventTtlMs?: number } {
  return values['kvstore-servers'].length > 0 ? {} : { eventTtlMs: values['event-ttl'] }
}
