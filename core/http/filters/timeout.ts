/**
 * The deadline of non-long-running requests: `--request-timeout`, shortened
 * by a `?timeout=` the client sends. Past it the client gets 504 Timeout.
 */
import type { MiddlewareHandler } from 'hono'
import { isLongRunning, type RequestInfo } from '../../machinery/request-info.js'
import { statusResponse } from '../respond.js'
import { timeout } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'
import { parseGoDuration } from '../../machinery/duration.js'

/** `onTimedOut`: told of each request answered 504 here (upstream records it as a termination). */
export function timeoutFilter(defaultMs: number, onTimedOut?: (request: Request, info: RequestInfo) => void): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    if (isLongRunning(c.get('requestInfo'))) return next()
    let ms = defaultMs
    const requested = c.req.query('timeout')
    if (requested) {
      const parsed = parseGoDuration(requested)
      if (parsed !== undefined && parsed > 0 && parsed < ms) ms = parsed
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), ms)
    })
    try {
      const winner = await Promise.race([next().then(() => 'done' as const), expired])
      if (winner === 'timeout') {
        onTimedOut?.(c.req.raw, c.get('requestInfo'))
        return statusResponse(timeout('request did not complete within requested timeout - context deadline exceeded'))
      }
    } finally {
      clearTimeout(timer)
    }
  }
}
