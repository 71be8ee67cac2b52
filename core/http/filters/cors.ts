/**
 * `--cors-allowed-origins` (upstream: WithCORS). A request whose Origin
 * matches one of the patterns (RE2, as Go's regexp, unanchored) gets the
 * Access-Control headers; a preflight (OPTIONS) from such an origin is
 * answered 204 here, before authentication, since browsers send it without
 * credentials. Other origins pass through without CORS headers, so the
 * browser refuses to hand the answer to the page.
 */
import type { MiddlewareHandler } from 'hono'
import { compileRegex } from '../../regex/re2.js'
import { setAnswerHeader } from '../answer-headers.js'
import type { ChainEnv } from './context.js'

const ALLOWED_METHODS = 'POST, GET, OPTIONS, PUT, DELETE, PATCH'
const ALLOWED_HEADERS = 'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since'
const EXPOSED_HEADERS = 'Date'

function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    'Access-Control-Allow-Credentials': 'true',
  }
}

/** Undefined when no pattern is given: CORS is off. The flag's rules have checked that every pattern compiles. */
export function corsFilter(allowedOrigins: readonly string[]): MiddlewareHandler<ChainEnv> | undefined {
  if (allowedOrigins.length === 0) return undefined
  const patterns = allowedOrigins.map((pattern) => compileRegex(pattern))
  return async (c, next) => {
    const origin = c.req.header('origin')
    if (!origin || !patterns.some((re) => re.test(origin))) return next()
    const headers = corsHeaders(origin)
    if (c.req.method === 'OPTIONS') return new Response(null, { status: 204, headers })
    await next()
    for (const [name, value] of Object.entries(headers)) setAnswerHeader(c.res, name.toLowerCase(), value)
  }
}
