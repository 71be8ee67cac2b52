/**
 * The two filters of graceful shutdown (upstream: WithRetryAfter and
 * WithWaitGroup). Both exempt the same requests, health probes and metrics
 * scrapes, so that probes keep answering and the wait group can drain.
 */
import type { MiddlewareHandler } from 'hono'
import type { ServerLifecycle } from '../../lifecycle/lifecycle.js'
import { isLongRunning } from '../../machinery/request-info.js'
import { goHttpError, statusResponse } from '../respond.js'
import { serviceUnavailable } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

const EXEMPT_PATH_PREFIXES = ['/readyz', '/livez', '/healthz', '/metrics']

/** Probes, scrapes and the server's own loopback client are never turned away while shutting down. */
function isExempt(path: string, userAgent: string | undefined): boolean {
  return (userAgent?.startsWith('kube-apiserver/') ?? false) || EXEMPT_PATH_PREFIXES.some((prefix) => path.startsWith(prefix))
}

/**
 * `--shutdown-send-retry-after`: once the shutdown delay is over, new
 * requests get 429 with `Retry-After: 5` and `Connection: close`, so the
 * client retries on another server over a new connection.
 */
export function shutdownRetryAfterFilter(lifecycle: ServerLifecycle): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    if (!lifecycle.shutdownDelayElapsed || isExempt(c.req.path, c.req.header('user-agent'))) return next()
    // In plain text, as upstream's filter writes it. The listener turns `Connection: close` into closing the connection (HTTP/1.1) or a GOAWAY (HTTP/2).
    return goHttpError('The apiserver is shutting down, please try again later.', 429, { 'Retry-After': '5', Connection: 'close' })
  }
}

/**
 * Counts ordinary requests in flight so that shutdown can wait for them.
 * Once the delay is over no new one is admitted (503, as upstream's
 * wait group answers after Wait began); long-running ones are not counted.
 */
export function inFlightWaitGroupFilter(lifecycle: ServerLifecycle): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    if (isLongRunning(c.get('requestInfo'))) return next()
    if (lifecycle.shutdownDelayElapsed) {
      if (isExempt(c.req.path, c.req.header('user-agent'))) return next()
      const refusal = statusResponse(serviceUnavailable('apiserver is shutting down'))
      refusal.headers.set('Retry-After', '1')
      return refusal
    }
    lifecycle.inFlight.add()
    try {
      await next()
    } finally {
      lifecycle.inFlight.done()
    }
  }
}
