/**
 * The handler of a listener opened before the server it serves is ready.
 *
 * The daemon listens as soon as its certificates are read, while the
 * store opens and start-up writes. A client's connection and TLS handshake
 * then happen while start-up waits on the store, rather than after it: a
 * harness polling /healthz (envtest, every 100 ms on one kept-alive
 * connection) has its connection in hand, and its request is answered the
 * moment start-up is through rather than at its next poll. Every request,
 * health checks too, waits until the daemon serves (its signals taken, so
 * that a harness that saw an answer may stop it at once), as it would have
 * waited for the port to open; one that came before a start-up that failed
 * is refused.
 *
 * Nothing has authenticated a waiting request, so their number is bounded:
 * no more wait than the server would run at once once it serves (its
 * in-flight limits); others are answered 429 at once, as an overloaded
 * server answers.
 */
import { serviceUnavailable, tooManyRequests } from '../../../core/machinery/status-error.js'
import { statusResponse } from '../../../core/http/respond.js'
import type { ConnectionInfo } from '../../../core/index.js'
import type { FetchHandler } from '../adapter/serve.js'

export interface ServerToCome extends FetchHandler {
  /** Start-up is through: requests that waited, and every later one, go to `server`. */
  serve(server: FetchHandler): void
  /** Start-up failed: requests that waited, and every later one, are refused. */
  refuse(): void
}

export function serverToCome(maxWaiting: number): ServerToCome {
  let settle!: (server: FetchHandler) => void
  const started = new Promise<FetchHandler>((resolve) => (settle = resolve))
  let current: FetchHandler | undefined
  let waiting = 0
  const refusing: FetchHandler = { fetch: async () => statusResponse(serviceUnavailable('the server failed to start')) }
  const wait = async (request: Request, connection?: ConnectionInfo): Promise<Response> => {
    if (waiting >= maxWaiting) return statusResponse(tooManyRequests('Too many requests, please try again later.', 1))
    waiting++
    try {
      return await (await started).fetch(request, connection)
    } finally {
      waiting--
    }
  }
  return {
    fetch: (request: Request, connection?: ConnectionInfo) => (current ? current.fetch(request, connection) : wait(request, connection)),
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
