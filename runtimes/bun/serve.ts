/**
 * The core served by `Bun.serve`: a thin adapter, as hono's Bun adapter is.
 *
 * Authentication: Bun hands the fetch handler no TLS socket, so the peer
 * certificate a client presents is not visible per request
 * (oven-sh/bun#14097, #16254). The adapter therefore never requests client
 * certificates and passes a ConnectionInfo with only the remote address: core
 * then requires a credential it can check itself, which for now is a static
 * bearer token (options.authentication.tokens). Token authentication is the
 * accepted mode of the Bun adapter until Bun exposes the peer certificate.
 *
 * Transport: TLS with a serving certificate (see `tls.ts`), or plain HTTP,
 * which is only ever bound to a loopback address because the token would
 * otherwise cross the network in clear text.
 */
import { statusResponse } from '../../core/http/respond.js'
import { StatusError } from '../../core/machinery/status-error.js'
import type { ConnectionInfo } from '../../core/ports.js'

/** What the adapter needs of an ApiServer: its fetch handler. */
export interface FetchHandler {
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>
}

/** The slice of Bun's API used here, declared locally: this tree type-checks without bun-types. */
interface BunSocketAddress {
  address: string
  port: number
}
interface BunServer {
  readonly port: number
  readonly url: URL
  requestIP(request: Request): BunSocketAddress | null
  /** Per-request idle timeout in seconds; 0 turns it off. */
  timeout(request: Request, seconds: number): void
  stop(closeActiveConnections?: boolean): Promise<void>
}
interface BunServeOptions {
  hostname: string
  port: number
  idleTimeout: number
  tls?: { key: string; cert: string }
  fetch(request: Request, server: BunServer): Promise<Response>
  error(err: Error): Response
}
declare const Bun: { serve(options: BunServeOptions): BunServer }

export interface ServeBunOptions {
  /** @default '127.0.0.1' */
  hostname?: string
  /** 0 picks a free port. @default 0 */
  port?: number
  /** PEM serving key and certificate; without it the adapter speaks plain HTTP, on loopback only. */
  tls?: { key: string; cert: string }
}

export interface BunListener {
  /** e.g. `https://127.0.0.1:40123` (no trailing slash, as a kubeconfig's server). */
  url: string
  port: number
  /** Stops accepting and cuts open connections (watches). */
  close(): Promise<void>
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/** Bun's default idle timeout (10 s) would cut quiet watches; other requests keep it. */
const IDLE_TIMEOUT_SECONDS = 10

function isWatch(request: Request): boolean {
  const url = new URL(request.url)
  const watch = url.searchParams.get('watch')
  return watch === 'true' || watch === '1' || url.pathname.includes('/watch/')
}

function internalError(message: string): Response {
  return statusResponse(new StatusError(500, 'InternalError', message))
}

export function serveBun(server: FetchHandler, opts: ServeBunOptions = {}): BunListener {
  const hostname = opts.hostname ?? '127.0.0.1'
  if (!opts.tls && !LOOPBACK.has(hostname)) {
    throw new Error(`refusing plain HTTP on ${hostname}: bearer tokens would travel in clear text; give a TLS certificate or bind 127.0.0.1`)
  }
  const bun = Bun.serve({
    hostname,
    port: opts.port ?? 0,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    ...(opts.tls ? { tls: opts.tls } : {}),
    async fetch(request, bunServer) {
      if (isWatch(request)) bunServer.timeout(request, 0)
      const peer = bunServer.requestIP(request)
      // Always a ConnectionInfo, never undefined: undefined would mean "the embedding program" and run as admin.
      const connection: ConnectionInfo = peer ? { remoteAddress: peer.address } : {}
      return server.fetch(request, connection)
    },
    error(err) {
      return internalError(`Internal error occurred: ${err.message}`)
    },
  })
  const scheme = opts.tls ? 'https' : 'http'
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  return {
    url: `${scheme}://${host}:${bun.port}`,
    port: bun.port,
    close: () => bun.stop(true),
  }
}
