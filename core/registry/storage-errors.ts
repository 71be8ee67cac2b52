/**
 * Storage errors become API errors here, with the resource named as upstream
 * names it (upstream's `registry/generic/registry/storage_error.go`).
 */
import {
  alreadyExists,
  badRequest,
  conflict,
  internalError,
  type GroupResource,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  StatusError,
  type StatusReason,
  serviceUnavailable,
} from '../machinery/status-error.js'
import { StorageError } from '../storage/interface.js'

export const EXPIRED_CONTINUE_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'

export function interpretStorageError(err: unknown, gr: GroupResource, name: string, continuing = false): unknown {
  if (!(err instanceof StorageError)) return err
  switch (err.code) {
    case 'KeyNotFound':
      return notFound(gr, name)
    case 'KeyExists':
      return alreadyExists(gr, name)
    case 'ResourceVersionConflict':
      return conflict(gr, name, OPTIMISTIC_LOCK_MESSAGE)
    case 'PreconditionFailed':
      return conflict(gr, name, err.message)
    case 'Compacted':
      return continuing
        ? new StatusError(410, 'Expired', EXPIRED_CONTINUE_MESSAGE)
        : new StatusError(410, 'Expired', `The resourceVersion for the provided list is too old.`)
    case 'InvalidContinue':
      return badRequest(`invalid continue token: ${err.message}`)
    case 'InvalidResourceVersion':
      return badRequest(err.message)
    case 'TooLargeResourceVersion': {
      // Upstream's NewTooLargeResourceVersionError: the cause tells clients (a reflector) to retry, not to relist.
      const causes = [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]
      return new StatusError(504, 'Timeout', `Timeout: Too large resource version: ${err.message}`, { causes, retryAfterSeconds: 1 })
    }
    case 'Unavailable':
      return serviceUnavailable(err.message)
    case 'Internal':
      return internalError(err.message)
    case 'RequestTooLarge':
      // Upstream's etcd3 store returns etcd's error unwrapped: a 500 with etcd's text and no reason.
      return new StatusError(500, '' as StatusReason, err.message)
  }
}
