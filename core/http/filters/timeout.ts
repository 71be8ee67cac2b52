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
import { observeBody } from '../observed-body.js'
import { knownSize } from '../response-size.js'
import { queryOf } from '../query.js'

/** `onTimedOut`: told of each request answered 504 here (upstream records it as a termination). */
export function timeoutFilter(defaultMs: number, onTimedOut?: (request: Request, info: RequestInfo) => void): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    if (isLongRunning(c.get('requestInfo'))) return next()
    let ms = defaultMs
    // The request's one parse of its query (query.ts): hono's own reader would scan a long query again.
    const requested = queryOf(c.req.raw).get('timeout')
    if (requested) {
      const parsed = parseGoDuration(requested)
      if (parsed !== undefined && parsed > 0 && parsed < ms) ms = parsed
    }
    let deadline: AbortController | undefined
    let passed: Error | undefined
    c.set('deadline', () => {
      if (!deadline) {
        deadline = new AbortController()
        if (passed) deadline.abort(passed)
      }
      return deadline.signal
    })
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout')
        // A turn later: a handler that stops at the abort sets its own answer on the context, and must not
        // before the 504 below has gone out as the request's answer.
        setTimeout(() => {
          passed = new Error('context deadline exceeded')
          deadline?.abort(passed)
        }, 0)
      }, ms)
    })
    let bodyKeepsDeadline = false
    try {
      const winner = await Promise.race([next().then(() => 'done' as const), expired])
      if (winner === 'timeout') {
        onTimedOut?.(c.req.raw, c.get('requestInfo'))
        return statusResponse(timeout('request did not complete within requested timeout - context deadline exceeded'), c.req.header('accept'))
      }
      // Another server's answer, relayed as it streams, is cut at the deadline too, as upstream's
      // timeout ends a request whose handler is still writing: one that drips, or never ends, held a
      // connection on both sides for as long as its backend liked.
      const res = c.res
      if (c.get('relayed') && res.body && knownSize(res) === undefined) {
        bodyKeepsDeadline = true
        const done = (): void => clearTimeout(timer)
        const body = observeBody(res.body, { onClose: done, onCancel: done })
        if (body !== res.body) c.res = new Response(body, res)
      }
    } finally {
      if (!bodyKeepsDeadline) clearTimeout(timer)
    }
  }
}
