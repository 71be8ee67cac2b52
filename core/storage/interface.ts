/**
 * The storage contract (docs/architecture.md), modelled on upstream's
 * `storage.Interface`: objects in, objects out, the store's revision as every
 * object's `metadata.resourceVersion`. Backends: memory (here), the embedded
 * durable store and etcd (later issues); one contract suite covers them all.
 */
import type { KubeObject } from '../machinery/object.js'

export interface Preconditions {
  uid?: string
  resourceVersion?: string
}

/**
 * How a list or watch picks its starting point, as upstream's ListOptions:
 * `resourceVersion` unset = the latest (consistent) state; `"0"` = any state
 * the store has at hand; a number with `match` Exact = exactly that revision,
 * with NotOlderThan (or no match) = at least that fresh.
 */
export interface ReadOptions {
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan'
  /**
   * The caller only reads what it gets (it encodes it for an answer, or a
   * watch cache keeps it frozen): a watch cache, or a store that holds
   * frozen objects, may then hand out those instead of copies.
   */
  readOnly?: boolean
}

export interface ListOptions extends ReadOptions {
  /** At most this many items; 0 or absent = all. */
  limit?: number
  /** The opaque token of a previous page (carries its revision). */
  continue?: string
  /** Filter applied while paging (label and field selectors), so pages hold matching items. */
  predicate?: (obj: KubeObject) => boolean
}

export interface ListResult {
  items: KubeObject[]
  /** The revision the list was read at. */
  revision: number
  /** Set when more items remain. */
  continue?: string
  /** How many items remain after this page, when known. */
  remainingItemCount?: number
}

export type StorageEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'

export interface StorageEvent {
  type: StorageEventType
  /** The object after the change; for DELETED, its last state at the deletion's revision. For BOOKMARK, only metadata.resourceVersion. */
  object: KubeObject
  /** The revision of this event. */
  revision: number
}

export interface WatchOptions {
  /** `""`/absent: current state as ADDED events, then changes; `"0"`: the same from any state; N: changes after N. */
  resourceVersion?: string
  predicate?: (obj: KubeObject) => boolean
  /** As ReadOptions.readOnly: the events' objects may be a watch cache's own, frozen. */
  readOnly?: boolean
  /** Emit BOOKMARK events carrying the latest revision every `bookmarkIntervalMs`. */
  bookmarks?: boolean
  bookmarkIntervalMs?: number
  signal?: AbortSignal
  /**
   * Events that may wait for a slow reader of a watch served by the backend
   * itself (no watch cache, or one it cannot serve): past it the watch ends
   * after what is queued and `onTerminated` is told, as the watch cache ends
   * its own slow watchers. Unbounded when absent.
   */
  bufferSize?: number
  onTerminated?: () => void
}

/** A running watch: iterate its events; `stop()` ends the iteration. */
export interface Watcher extends AsyncIterable<StorageEvent> {
  stop(): void
  /**
   * Asks for a BOOKMARK soon at a revision the watch has delivered every
   * event up to, at least the store's current one when the store can vouch
   * for it (the watch cache waits on this for consistent reads). Optional:
   * a watch without it moves on with its changes and periodic BOOKMARKs only.
   */
  requestProgress?(): void
  /**
   * The next event if one is ready now, `done` once the watch has ended, or
   * undefined when there is nothing yet. Optional, with `whenReady`: a
   * consumer that writes events itself takes them without a promise each
   * (the iterator stays the way every watch is read).
   */
  poll?(): IteratorResult<StorageEvent, undefined> | undefined
  /**
   * Calls `listener` once, when `poll()` has something again (an event or
   * the end); called from within the store's own delivery, so it must only
   * note that and come back. Only after `poll()` gave undefined.
   */
  whenReady?(listener: () => void): void
}

/** A watch whose events can be taken without waiting on a promise each (`poll` and `whenReady`). */
export function isPollable(w: Watcher): w is Watcher & Required<Pick<Watcher, 'poll' | 'whenReady'>> {
  return w.poll !== undefined && w.whenReady !== undefined
}

export type TryUpdate = (current: KubeObject) => KubeObject | Promise<KubeObject>

export interface UpdateOptions {
  preconditions?: Preconditions
  /**
   * What the caller believes the current state is (a watch cache's copy, with
   * its resourceVersion, which may be frozen: a store that runs `tryUpdate` on
   * it hands over a copy, and never changes the guess itself): a store may start from
   * it instead of reading the key, as upstream's etcd store does, and must
   * read the key when the guess proves wrong (the write's guard fails, or
   * the preconditions or `tryUpdate` fail on it, or nothing changed). A store
   * may ignore it.
   */
  suggestion?: KubeObject
  /**
   * The caller only reads the answer (it encodes it for a client): a store
   * may then hand back a frozen object, its own or the suggestion, instead
   * of a copy. An update that changes nothing then answers the very object
   * a GET would, whose encoding the server keeps.
   */
  readOnly?: boolean
}

export interface DeleteOptions {
  preconditions?: Preconditions
  /** Called with the state about to be deleted; throwing vetoes the deletion. */
  validate?: (current: KubeObject) => void | Promise<void>
  /**
   * What the caller believes the current state is (a watch cache's copy, which
   * may be frozen: a store reads it and never changes it), as for an update: a
   * store may start from it instead of reading the key, and must read the key
   * when the guess proves wrong (the delete's guard fails, or the preconditions
   * or `validate` fail on it). A store may ignore it.
   */
  suggestion?: KubeObject
}

export interface Storage {
  /** Stores a new object at `key`; throws KeyExists when present. Returns it with its resourceVersion. */
  create(key: string, obj: KubeObject): Promise<KubeObject>
  /** The object at `key`, or undefined. */
  get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined>
  /** Objects whose keys start with `prefix` (which ends in `/`), in key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>
  /**
   * Reads the object at `key`, hands it to `tryUpdate` and stores the result,
   * retrying when another write came in between. Throws KeyNotFound when absent.
   */
  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: UpdateOptions): Promise<KubeObject>
  /** Removes the object at `key`; `validate` may veto after reading the current state. */
  delete(key: string, opts?: DeleteOptions): Promise<KubeObject>
  /** Watches every key under `prefix` (or exactly `key` when it does not end in `/`). */
  watch(prefix: string, opts?: WatchOptions): Watcher
  count(prefix: string): Promise<number>
  /**
   * Creates the objects, each only where its key is free, no two of one
   * kind at the same revision (a watch of a resource takes one revision
   * for one change; objects of different kinds may share one), as
   * cheaply as the backend can: nothing is read back (a start-up
   * template's objects, written before any cache of this server exists).
   * Stops at the first key found taken, in any order. Answers the revision
   * each object was created at, in the order given: 0 for one it did not
   * create (its key taken, or left untried once a key was found taken).
   * Optional: callers create one by one without it.
   */
  createMany?(objects: readonly (readonly [key: string, obj: KubeObject])[]): Promise<number[]>
  currentRevision(): Promise<number>
  /** Ends every watch and releases resources. */
  close(): Promise<void>
}

export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'ResourceVersionConflict'
  | 'PreconditionFailed'
  /** the requested revision is older than the kept history (HTTP 410) */
  | 'Compacted'
  /** a continue token that cannot be decoded (HTTP 400) */
  | 'InvalidContinue'
  /** the requested revision is newer than the store's (HTTP 504, retry) */
  | 'TooLargeResourceVersion'
  /** a resourceVersion that is not a revision number (HTTP 400) */
  | 'InvalidResourceVersion'
  | 'Unavailable'
  /** a stored value that cannot be read, such as one encrypted with a removed key (HTTP 500) */
  | 'Internal'
  /** a value larger than etcd stores with its defaults (HTTP 500, etcd's own error, as upstream passes it on) */
  | 'RequestTooLarge'

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message: string,
    /** For Compacted: the oldest revision still available; for TooLarge: the current one. */
    readonly revision?: number,
  ) {
    super(message)
    this.name = 'StorageError'
  }
}
