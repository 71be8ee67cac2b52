/**
 * The one place errors become responses (hono's onError): a StatusError
 * renders its Status; anything else is a 500 and is logged with its stack.
 */
import type { ErrorHandler } from 'hono'
import type { Logger } from '../../logging/logger.js'
import { statusResponse } from '../respond.js'
import { internalError, StatusError } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

export function errorHandler(logger: Logger): ErrorHandler<ChainEnv> {
  return (err, c) => {
    // In the encoding the request accepts, as upstream negotiates an error's Status.
    if (err instanceof StatusError) return statusResponse(err, c.req.header('accept'))
    logger.error({ method: c.req.method, path: c.req.path, err: err.stack ?? String(err) }, 'request failed unexpectedly')
    return statusResponse(internalError(err), c.req.header('accept'))
  }
}
