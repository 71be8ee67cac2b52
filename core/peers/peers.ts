/**
 * The peer proxy's background work for one server, started once its id is
 * known: its endpoint record renewed every interval, and its peers'
 * discovery read at start and every interval after.
 */
import type { Logger } from '../ports.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { Storage } from '../storage/interface.js'
import { type PeerDirectory, peerDirectory } from './peer-discovery.js'
import { DEFAULT_PEER_ENDPOINT, type PeerEndpointTimings, peerEndpoints } from './peer-endpoints.js'
import { peerForwarder, type PeerForward, type PeerTlsSettings } from './peer-transport.js'

export interface PeerProxyOptions extends PeerTlsSettings {
  /** `host:port` peers reach this server at (`--peer-advertise-ip`, `--peer-advertise-port`); @default the advertised address and secure port */
  address?: string
  /** @default DEFAULT_PEER_ENDPOINT */
  endpointTimings?: Partial<PeerEndpointTimings>
  /** How often the peers' discovery is read. @default the endpoint interval */
  discoveryIntervalMs?: number
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

export function startPeers(options: PeerProxyOptions, ctx: PeerContext, serverId: string, address: string): RunningPeers {
  const timings = { ...DEFAULT_PEER_ENDPOINT, ...options.endpointTimings }
  const endpoints = peerEndpoints(ctx.storage, ctx.root, serverId, address, timings, ctx.now)
  const forward = peerForwarder(ctx.transport, options)
  const directory = peerDirectory(serverId, endpoints, forward, ctx.logger)
  const renew = () => endpoints.renew().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot renew the peer endpoint record'))
  const refresh = () => directory.refresh().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot read the peer servers'))
  void renew().then(refresh)
  const renewTimer = setInterval(renew, timings.intervalMs)
  const refreshTimer = setInterval(refresh, options.discoveryIntervalMs ?? timings.intervalMs)
  return {
    directory,
    forward,
    async stop() {
      clearInterval(renewTimer)
      clearInterval(refreshTimer)
      await endpoints.remove().catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'cannot remove the peer endpoint record'))
    },
  }
}
