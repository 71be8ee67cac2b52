/**
 * The StorageErrors every backend throws, worded once and as upstream's
 * etcd3 store words them, so a client cannot tell the backends apart.
 */
import { GoNumError, parseGoUint64 } from '../machinery/go-strconv.js'
import type { KubeObject } from '../machinery/object.js'
import { type Preconditions, StorageError } from './interface.js'

/** Upstream's wording for an expired continue token (etcd3 store, `continueExpired`). */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.'

/**
 * An error made without capturing a stack: for one handed to many watches
 * at once, where the stack would say nothing and walking it (through every
 * await the call came through) costs more than the rest of the work.
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

export function keyNotFound(key: string): StorageError {
  return new StorageError('KeyNotFound', key, `key not found: ${key}`)
}

export function keyExists(key: string, revision: number | undefined): StorageError {
  return new StorageError('KeyExists', key, `key exists: ${key}`, revision)
}

/**
 * The most bytes one stored value may take: etcd's default
 * `--max-request-bytes` (1.5 MiB). Past it etcd refuses the write, and
 * upstream's API server answers with etcd's error as it is; every backend
 * here refuses the same values, so an object that admission grew (a
 * mutating policy, a webhook) is never stored by one and refused by another.
 * etcd counts its whole request, whose key and framing add some hundred
 * bytes to the value: what an object controls is the value.
 */
export const MAX_STORED_VALUE_BYTES = 1.5 * 1024 * 1024

/** etcd's refusal of a request over `--max-request-bytes` (rpctypes.ErrRequestTooLarge), in its words. */
export function requestTooLarge(key: string): StorageError {
  return new StorageError('RequestTooLarge', key, 'etcdserver: request is too large')
}

/** Refuses, before anything is written, a value of `bytes` that etcd with its defaults would not store. */
export function refuseOversizedValue(key: string, bytes: number): void {
  if (bytes > MAX_STORED_VALUE_BYTES) throw requestTooLarge(key)
}

/**
 * A read asked for a revision the store has not reached. `wanted` may be the
 * resourceVersion as given: a uint64 past 2^53 is shown to its last digit
 * (as upstream's %d of it), not as the number it rounds to.
 */
export function tooLarge(key: string, wanted: number | string, current: number): StorageError {
  const shown = typeof wanted === 'string' ? parseGoUint64(wanted).toString() : String(wanted)
  // The registry words it as "Too large resource version: <this message>".
  return new StorageError('TooLargeResourceVersion', key, `${shown}, current: ${current}`, current)
}

export function compactedRead(key: string, compacted: number | undefined): StorageError {
  return new StorageError('Compacted', key, 'The resourceVersion for the provided list is too old.', compacted)
}

export function compactedWatch(key: string, from: number, compacted: number): StorageError {
  return new StorageError('Compacted', key, `too old resource version: ${from} (${compacted})`, compacted)
}

export function continueExpired(prefix: string, compacted: number | undefined): StorageError {
  return new StorageError('Compacted', prefix, CONTINUE_EXPIRED, compacted)
}

/** A call after close(): `what` names the store (`the embedded store`). */
export function storeClosed(key: string, what: string): StorageError {
  return new StorageError('Unavailable', key, `${what} is closed`)
}

/**
 * Why `rv` is not a resourceVersion, in upstream's words (its versioner's
 * field error); undefined for one that is ("" and "0" included).
 */
export function resourceVersionSyntaxError(rv: string | undefined): string | undefined {
  if (rv === undefined || rv === '') return undefined
  try {
    parseGoUint64(rv)
    return undefined
  } catch (err) {
    if (!(err instanceof GoNumError)) throw err
    return `resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${err.message}`
  }
}

/**
 * `undefined` for the "any/latest" values ('' and '0'), else the revision.
 * Worded as upstream's versioner (`strconv.ParseUint` underneath). Any
 * uint64 is a revision, as upstream reads one; one past 2^53 comes back
 * rounded, still above every revision a store reaches.
 */
export function parseResourceVersion(key: string, rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined
  const invalid = resourceVersionSyntaxError(rv)
  if (invalid) throw new StorageError('InvalidResourceVersion', key, `invalid resource version: ${invalid}`)
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
