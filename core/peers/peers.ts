/**
 * The peer proxy's background work for one server, started once its id is
 * known: its endpoint record renewed every interval, and its peers'
 * discovery read as their records come, change and go.
 */
import type { Logger } from '../logging/logger.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { Storage } from '../storage/interface.js'
import { type DiscoveryRetry, type PeerDirectory, peerDirectory } from './peer-discovery.js'
import { DEFAULT_PEER_ENDPOINT, type PeerEndpointTimings, peerEndpoints } from './peer-endpoints.js'
import { followPeerEndpoints } from './peer-follower.js'
import { peerForwarder, type PeerForward, type PeerTlsSettings } from './peer-transport.js'

export interface PeerProxyOptions extends PeerTlsSettings {
  /** `host:port` peers reach this server at (`--peer-advertise-ip`, `--peer-advertise-port`); @default the advertised address and secure port */
  address?: string
  /** @default DEFAULT_PEER_ENDPOINT */
  endpointTimings?: Partial<PeerEndpointTimings>
  /** How a failed read of a peer's discovery is tried again. @default DEFAULT_DISCOVERY_RETRY */
  discoveryRetry?: DiscoveryRetry
}

export interface PeerContext {
  storage: Storage
  root: string
  transport: ProxyTransport
  now: () => Date
  logger: Logger
}

export interface RunningPeers {
  directory: PeerDirectory
  forward: PeerForward
  stop(): Promise<void>
}

/** This server's view of its peers, kept current from the endpoint records; the daemon's and the tests'. */
export function followPeers(ctx: Omit<PeerContext, 'transport'>, serverId: string, forward: PeerForward, retry?: DiscoveryRetry): { directory: PeerDirectory; stop(): void } {
  const directory = peerDirectory(serverId, forward, ctx.logger, retry)
  const follower = followPeerEndpoints(ctx, directory)
  return {
    directory,
    stop() {
      follower.stop()
      directory.stop()
    },
  }
}

export function startPeers(options: PeerProxyOptions, ctx: PeerContext, serverId: string, address: string): RunningPeers {
  const timings = { ...DEFAULT_PEER_ENDPOINT, ...options.endpointTimings }
  const endpoints = peerEndpoints(ctx.storage, ctx.root, serverId, address, timings, ctx.now)
  const forward = peerForwarder(ctx.transport, options)
  const peers = followPeers(ctx, serverId, forward, options.discoveryRetry)
  const renew = () => endpoints.renew().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot renew the peer endpoint record'))
  void renew()
  const renewTimer = setInterval(renew, timings.intervalMs)
  return {
    directory: peers.directory,
    forward,
    async stop() {
      clearInterval(renewTimer)
      peers.stop()
      await endpoints.remove().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot remove the peer endpoint record'))
    },
  }
}
