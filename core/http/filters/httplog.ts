/**
 * The HTTP log (upstream's httplog, WithHTTPLogging): one line per request
 * at V(3) of the `httplog` module, "HTTP" with the verb as the metrics
 * report it, the request URI, the latency in Go's duration notation, the
 * user agent, the audit ID, the client's address and the response status
 * (`hijacked=true` instead for a connection upgrade). Costs nothing but a
 * check when V(3) is off. The line is written when the handler answers: a
 * watch's is written as its stream starts, not when it ends.
 */
import type { MiddlewareHandler } from 'hono'
import { verbose } from '../../logging/verbosity.js'
import type { Logger } from '../../logging/logger.js'
import type { ChainEnv } from './context.js'
import { logVerb } from './metrics.js'

/** The verbosity of the request line, as upstream. */
export const HTTP_LOG_LEVEL = 3
const MODULE = 'httplog'
const MAX_LOGGED_AUDIT_ID = 64

/** Milliseconds as Go's time.Duration prints them: 812ns, 3.5µs, 1.234567ms, 2.5s, 1m3s. */
export function goDuration(ms: number): string {
  const ns = Math.max(0, Math.round(ms * 1e6))
  if (ns === 0) return '0s'
  const fixed = (value: number, unit: number, digits: number): string => (value / unit).toFixed(digits).replace(/\.?0+$/, '')
  if (ns < 1e3) return `${ns}ns`
  if (ns < 1e6) return `${fixed(ns, 1e3, 3)}µs`
  if (ns < 1e9) return `${fixed(ns, 1e6, 6)}ms`
  const totalSeconds = ns / 1e9
  const hours = Math.floor(totalSeconds / 3600)
  const minutes = Math.floor((totalSeconds % 3600) / 60)
  const seconds = (ns - (hours * 3600 + minutes * 60) * 1e9) / 1e9
  const secondsText = `${seconds.toFixed(9).replace(/\.?0+$/, '')}s`
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`
  if (minutes > 0) return `${minutes}m${secondsText}`
  return secondsText
}

export function httpLogFilter(logger: Logger, clock: () => number = () => performance.now()): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    if (!verbose(logger, HTTP_LOG_LEVEL, MODULE)) return next()
    const started = clock()
    const userAgent = c.req.header('user-agent') ?? ''
    try {
      await next()
    } finally {
      const log = verbose(logger, HTTP_LOG_LEVEL, MODULE)
      const url = new URL(c.req.url)
      const info = c.get('requestInfo')
      const status = c.res.status
      log?.(
        {
          verb: info ? logVerb(info, c.req.raw) : c.req.method,
          URI: url.pathname + url.search,
          latency: goDuration(clock() - started),
          userAgent,
          // A client's own ID is cut to 64 characters in the log, as upstream's GetAuditIDTruncated (the event keeps it whole).
          'audit-ID': (c.get('auditID') ?? '').slice(0, MAX_LOGGED_AUDIT_ID),
          srcIP: c.env?.connection?.remoteAddress ?? '',
          ...(status === 101 ? { hijacked: true } : { resp: status }),
        },
        'HTTP',
      )
    }
  }
}
