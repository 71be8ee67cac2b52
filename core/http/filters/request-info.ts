import type { MiddlewareHandler } from 'hono'
import { queryOf } from '../query.js'
import { parseRequestInfo, RequestInfoError } from '../../machinery/request-info.js'
import { internalError } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

/** Computes the request info once; every later filter and handler reads it. */
export const requestInfoFilter: MiddlewareHandler<ChainEnv> = async (c, next) => {
  try {
    c.set('requestInfo', parseRequestInfo(c.req.method, c.req.url, queryOf(c.req.raw)))
  } catch (err) {
    if (err instanceof RequestInfoError) throw internalError(`failed to create RequestInfo: ${err.message}`)
    throw err
  }
  await next()
}
