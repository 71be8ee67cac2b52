/**
 * The daemon's part in a cluster of servers: its host name for the server
 * id, whether its store is shared (etcd: other servers may use it), and the
 * `--coordinated-leadership-*` timings of the controllers' leader election.
 */
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { joinHostPort } from '../../../core/peers/peer-endpoints.js'
import type { PeerProxyOptions } from '../../../core/peers/peers.js'
import { featureEnabled, type FlagValues } from '../../../core/options/flags/index.js'
import type { MultiServerOptions } from '../../../core/controllers/multi-server-options.js'

type MultiServerFlags = Pick<
  FlagValues,
  | 'kvstore-servers'
  | 'workers'
  | 'coordinated-leadership-lease-duration'
  | 'coordinated-leadership-renew-deadline'
  | 'coordinated-leadership-retry-period'
  | 'feature-gates'
  | 'emulated-version'
  | 'version'
>

/** `instance` tells apart the servers of one daemon's `--workers`, which share host, address and port. */
export function multiServerOptions(values: MultiServerFlags, instance?: string): MultiServerOptions {
  return {
    hostname: hostname().toLowerCase(),
    ...(instance ? { instance } : {}),
    // etcd may be shared by several servers; the embedded store by the workers of one daemon, else it is one process's.
    sharedStorage: values['kvstore-servers'].length > 0 || values['workers'] > 1,
    identityLease: featureEnabled(values, 'APIServerIdentity'),
    coordinatedLeaderElection: featureEnabled(values, 'CoordinatedLeaderElection'),
    leaderElection: {
      leaseDurationMs: values['coordinated-leadership-lease-duration'],
      renewDeadlineMs: values['coordinated-leadership-renew-deadline'],
      retryPeriodMs: values['coordinated-leadership-retry-period'],
    },
  }
}

type PeerFlags = Pick<FlagValues, 'peer-advertise-ip' | 'peer-advertise-port' | 'peer-ca-file' | 'feature-gates' | 'emulated-version' | 'version'>

/**
 * The peer proxy's settings (feature gate UnknownVersionInteroperabilityProxy),
 * undefined with the gate off. As upstream, it needs the proxy client
 * certificate, which it presents to peers; without `--peer-ca-file` peers'
 * certificates are verified against the platform's CAs. Throws an Error
 * naming what is missing or unreadable.
 */
export async function peerProxyOptions(
  values: PeerFlags,
  proxyClientCertificate: { certificate: string; key: string } | undefined,
): Promise<PeerProxyOptions | undefined> {
  if (!featureEnabled(values, 'UnknownVersionInteroperabilityProxy')) return undefined
  if (!proxyClientCertificate) {
    throw new Error('the peer proxy (UnknownVersionInteroperabilityProxy) needs --proxy-client-cert-file and --proxy-client-key-file, the certificate it presents to peers')
  }
  const caFile = values['peer-ca-file']
  const caBundle = caFile
    ? await readFile(caFile, 'utf8').catch((err: Error) => {
        throw new Error(`--peer-ca-file: cannot read ${caFile}: ${err.message}`)
      })
    : undefined
  // Both or neither, as upstream: one alone falls back to the advertised address and secure port.
  const ip = values['peer-advertise-ip']
  const port = values['peer-advertise-port']
  return {
    clientCertificate: proxyClientCertificate,
    ...(caBundle ? { caBundle } : {}),
    ...(ip && port ? { address: joinHostPort(ip, port) } : {}),
  }
}
