/**
 * The peer proxy (upstream's UnknownVersionInteroperabilityProxy): a
 * resource request for a group/version/resource this server does not serve
 * goes to a live peer that does, picked at random, after this server
 * authenticated, audited and authorized it as any other; the peer answers
 * it as the caller (the identity travels as the aggregator's does). A
 * request a peer forwarded is answered where it lands, and one that no
 * server serves gets this server's own 404.
 */
import type { MiddlewareHandler } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { serviceUnavailable } from '../machinery/status-error.js'
import type { PeerDirectory } from './peer-discovery.js'
import { PEER_PROXIED_HEADER, type PeerForward } from './peer-transport.js'

export interface PeerProxyDeps {
  /** The resource is served here (built-in, custom or aggregated). */
  servedHere(group: string, version: string, resource: string): boolean
  directory: Pick<PeerDirectory, 'serving'>
  forward: PeerForward
  /** @default Math.random */
  random?: () => number
}

export function peerProxyMiddleware(deps: PeerProxyDeps): MiddlewareHandler<ChainEnv> {
  const random = deps.random ?? Math.random
  return async (c, next) => {
    const info = c.get('requestInfo')
    if (!info.isResourceRequest || c.req.header(PEER_PROXIED_HEADER) === 'true') return next()
    if (deps.servedHere(info.apiGroup, info.apiVersion, info.resource)) return next()
    const peers = deps.directory.serving(info.apiGroup, info.apiVersion, info.resource)
    if (peers.length === 0) return next()
    const hostPort = peers[Math.floor(random() * peers.length)] ?? peers[0]!
    const url = new URL(c.req.url)
    const request = c.req.raw
    const deadline = c.get('deadline')?.()
    try {
      const answer = await deps.forward(
        hostPort,
        { method: request.method, path: url.pathname + url.search, headers: request.headers, body: request.body, signal: deadline ? AbortSignal.any([request.signal, deadline]) : request.signal },
        c.get('user'),
      )
      c.set('relayed', true)
      return answer
    } catch (err) {
      throw serviceUnavailable(`error while proxying the request to a peer server: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
}
