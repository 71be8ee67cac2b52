/**
 * Connection upgrades passed through to a backend (exec, attach and
 * port-forward to a node agent): core authenticates, authorizes and audits
 * the upgrade request like any other and decides where it goes; the runtime,
 * which owns the client's socket, dials the backend, sends it the request
 * and then copies bytes both ways with backpressure (upstream's
 * UpgradeAwareHandler). WebSocket and SPDY alike pass as they are.
 */
import type { ForwardedRequest, ProxyTarget, SimulatedStream } from './transport.js'

export interface UpgradeHandoff {
  target: ProxyTarget
  /** The request line and headers sent to the backend (Connection and Upgrade kept); no body. */
  request: Omit<ForwardedRequest, 'body'>
  /** Set for a simulated node: nothing is dialled, the runtime plays this stream to the client itself. */
  simulated?: SimulatedStream
}

/** Given by a runtime that can hand a client's connection to a backend, on the request's ConnectionInfo. */
export type PassUpgrade = (handoff: UpgradeHandoff) => void

/** Whether the request asks to switch protocols (Connection names upgrade, Upgrade says to what). */
export function isUpgradeRequest(request: Request): boolean {
  const connection = request.headers.get('connection') ?? ''
  return Boolean(request.headers.get('upgrade')) && connection.split(',').some((t) => t.trim().toLowerCase() === 'upgrade')
}

/** The headers an upgrade keeps toward the backend: end-to-end ones plus Connection: Upgrade and Upgrade. */
export function upgradeHeaders(headers: Headers): Headers {
  const kept = new Headers()
  const dropped = new Set(['host', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'http2-settings'])
  for (const [name, value] of headers) if (!dropped.has(name)) kept.set(name, value)
  kept.set('connection', 'Upgrade')
  return kept
}
