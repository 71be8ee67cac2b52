/**
 * What the etcd backend says when something goes wrong, worded as the memory
 * store words it (core/storage/memory.ts is the contract), and the one place
 * that turns etcd's gRPC failures into StorageError codes: an unreachable
 * or overloaded etcd becomes Unavailable (503), a compacted revision
 * Compacted (410), a future one TooLargeResourceVersion (504).
 */
import { compactedRead, compactedWatch, continueExpired, requestTooLarge } from '../../../core/storage/errors.js'
import { StorageError } from '../../../core/storage/interface.js'
import { CircuitOpenError } from './etcd-fault-policy.js'
import { ClientClosedError, EtcdCallError, GrpcStatus, isOutOfRange, isRecoverableError } from './etcd-grpc-status.js'

export { checkPreconditions, keyExists, keyNotFound, parseResourceVersion, tooLarge } from '../../../core/storage/errors.js'

export function readCompacted(key: string, continuing: boolean, oldest: number | undefined): StorageError {
  return continuing ? continueExpired(key, oldest) : compactedRead(key, oldest)
}

export const watchCompacted = compactedWatch

/** etcd answers both with OUT_OF_RANGE; only the text tells them apart. */
export function isCompactedError(err: unknown): boolean {
  return isOutOfRange(err, 'required revision has been compacted')
}

export function isFutureRevisionError(err: unknown): boolean {
  return isOutOfRange(err, 'required revision is a future revision')
}

/**
 * etcd's own refusal of a request over its `--max-request-bytes`, as the
 * other backends refuse a value past etcd's default: a member configured
 * lower (or the key's bytes on top of a value at the bound) ends here.
 */
export function tooLargeRequest(key: string, err: unknown): StorageError | undefined {
  const refused = err instanceof EtcdCallError && err.code === GrpcStatus.INVALID_ARGUMENT && err.details.includes('request is too large')
  return refused ? requestTooLarge(key) : undefined
}

/**
 * True for failures that say nothing about the request itself: etcd down,
 * unreachable, overloaded or without a leader, a deadline, a paused circuit,
 * a closed client. The caller may retry later; a 503 tells clients so.
 */
export function isUnavailableError(err: unknown): boolean {
  return err instanceof CircuitOpenError || err instanceof ClientClosedError || isRecoverableError(err)
}

/** An Unavailable StorageError naming the endpoints, so an operator sees which etcd failed. */
export function unavailable(key: string, endpoints: readonly string[], err: unknown): StorageError {
  const cause = err instanceof Error ? err.message : String(err)
  return new StorageError('Unavailable', key, `etcd is unavailable (${endpoints.join(', ')}): ${cause}`)
}
