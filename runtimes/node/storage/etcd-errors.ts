/**
 * What the etcd backend says when something goes wrong, worded as the memory
 * store words it (core/storage/memory.ts is the contract), and the one place
 * that turns etcd3 and gRPC failures into StorageError codes: an unreachable
 * or overloaded etcd becomes Unavailable (503), a compacted revision
 * Compacted (410), a future one TooLargeResourceVersion (504).
 */
import { ClientClosedError, GRPCOutOfRangeError, isRecoverableError } from 'etcd3'
import type { KubeObject } from '../../../core/resources/object.js'
import { type Preconditions, StorageError } from '../../../core/storage/interface.js'
import { CircuitOpenError } from './etcd-fault-policy.js'

/** Upstream's wording for an expired continue token (etcd3 store, `continueExpired`). */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.'

/** Upstream's wording for a read at a revision etcd has compacted away. */
const READ_COMPACTED = 'The resourceVersion for the provided list is too old.'

export function keyNotFound(key: string): StorageError {
  return new StorageError('KeyNotFound', key, `key not found: ${key}`)
}

export function keyExists(key: string, revision: number | undefined): StorageError {
  return new StorageError('KeyExists', key, `key exists: ${key}`, revision)
}

export function tooLarge(key: string, wanted: number, current: number): StorageError {
  // The registry words it as "Too large resource version: <this message>".
  return new StorageError('TooLargeResourceVersion', key, `${wanted}, current: ${current}`, current)
}

export function readCompacted(key: string, continuing: boolean, oldest: number | undefined): StorageError {
  return new StorageError('Compacted', key, continuing ? CONTINUE_EXPIRED : READ_COMPACTED, oldest)
}

export function watchCompacted(key: string, from: number, compacted: number): StorageError {
  return new StorageError('Compacted', key, `too old resource version: ${from} (${compacted})`, compacted)
}

/**
 * `undefined` for the "any/latest" values ('' and '0'), else the revision.
 * Worded as upstream's versioner (`strconv.ParseUint` underneath).
 */
export function parseResourceVersion(key: string, rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw new StorageError(
      'InvalidResourceVersion',
      key,
      `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`,
    )
  }
  const n = Number(rv)
  return n === 0 ? undefined : n
}

export function checkPreconditions(key: string, current: KubeObject, pre: Preconditions | undefined): void {
  if (!pre) return
  const meta = current.metadata
  if (pre.uid !== undefined && pre.uid !== (meta.uid ?? '')) {
    throw new StorageError(
      'PreconditionFailed',
      key,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ''}`,
    )
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== (meta.resourceVersion ?? '')) {
    throw new StorageError(
      'PreconditionFailed',
      key,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`,
    )
  }
}

/** etcd answers both with OUT_OF_RANGE; only the text tells them apart. */
export function isCompactedError(err: unknown): boolean {
  return err instanceof GRPCOutOfRangeError && err.message.includes('required revision has been compacted')
}

export function isFutureRevisionError(err: unknown): boolean {
  return err instanceof GRPCOutOfRangeError && err.message.includes('required revision is a future revision')
}

/**
 * True for failures that say nothing about the request itself: etcd down,
 * unreachable, overloaded or without a leader, a deadline, a paused circuit,
 * a closed client. The caller may retry later; a 503 tells clients so.
 */
export function isUnavailableError(err: unknown): boolean {
  return (
    err instanceof CircuitOpenError ||
    err instanceof ClientClosedError ||
    (err instanceof Error && isRecoverableError(err))
  )
}

/** An Unavailable StorageError naming the endpoints, so an operator sees which etcd failed. */
export function unavailable(key: string, endpoints: readonly string[], err: unknown): StorageError {
  const cause = err instanceof Error ? err.message : String(err)
  return new StorageError('Unavailable', key, `etcd is unavailable (${endpoints.join(', ')}): ${cause}`)
}
