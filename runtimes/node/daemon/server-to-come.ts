/**
 * The handler of a listener opened before the server it serves is made.
 *
 * The daemon listens as soon as its certificates are read, while the
 * store opens and start-up writes (upstream listens before its post-start
 * hooks too). A client's connection and TLS handshake then happen while
 * start-up waits on the store, rather than after it: a harness polling
 * /healthz (envtest, every 100 ms on one kept-alive connection) has its
 * connection in hand when the server is through. A request that comes
 * before the server is made waits for it; the server itself answers
 * health checks during start-up (naming the hooks not yet done, as
 * upstream's do) and holds every other request until it is ready.
 */
import { serviceUnavailable } from '../../../core/machinery/status-error.js'
import { statusResponse } from '../../../core/http/respond.js'
import type { ConnectionInfo } from '../../../core/index.js'
import type { FetchHandler } from '../adapter/serve.js'

export interface ServerToCome extends FetchHandler {
  /** The server is made: requests that waited, and every later one, go to it. */
  serve(server: FetchHandler): void
  /** Start-up failed before the server was made: requests that waited, and every later one, are refused. */
  refuse(): void
}

export function serverToCome(): ServerToCome {
  let settle!: (server: FetchHandler) => void
  const made = new Promise<FetchHandler>((resolve) => (settle = resolve))
  let current: FetchHandler | undefined
  const refusing: FetchHandler = { fetch: async () => statusResponse(serviceUnavailable('the server failed to start')) }
  return {
    fetch: (request: Request, connection?: ConnectionInfo) => (current ? current.fetch(request, connection) : made.then((server) => server.fetch(request, connection))),
    serve(server) {
      current ??= server
      settle(current)
    },
    refuse() {
      current ??= refusing
      settle(current)
    },
  }
}
