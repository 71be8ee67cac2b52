/**
 * The etcd v3 backend (docs/architecture.md), with upstream's etcd3 store's
 * semantics: keys stored exactly as the registry builds them
 * (`/registry/pods/ns/name`, --kvstore-prefix already applied), values the
 * codec's bytes (--storage-media-type), and etcd's mod_revision as every
 * object's resourceVersion, so revisions are etcd's own and other tools see
 * the same numbers.
 *
 * Every write is one etcd transaction guarded by what was read (create: the
 * key is absent; update and delete: its mod_revision is unchanged), so nothing
 * is ever half-written and concurrent writers retry on the fresh state as
 * upstream's GuaranteedUpdate does. Reads without a resourceVersion are
 * linearizable; "0" may be served by any member.
 */
import { cloneJson, type KubeObject } from '../../../core/machinery/object.js'
import type { ObjectCodec } from '../../../core/storage/codec.js'
import { CONTINUE_AT_LATEST, decodeContinue, encodeContinue } from '../../../core/storage/continue-token.js'
import {
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type Storage,
  StorageError,
  type TryUpdate,
  type UpdateOptions,
  type Watcher,
  type WatchOptions,
} from '../../../core/storage/interface.js'
import { EtcdClient, type EtcdConnectionOptions } from './etcd-client.js'
import type { Compare, KeyValue, RangeRequest, RangeResponse, RequestOp, TxnResponse } from './etcd-wire.js'
import { EtcdCompactor } from './etcd-compactor.js'
import {
  checkPreconditions,
  isCompactedError,
  isFutureRevisionError,
  isUnavailableError,
  keyExists,
  keyNotFound,
  parseResourceVersion,
  readCompacted,
  tooLarge,
  tooLargeRequest,
  unavailable,
} from './etcd-errors.js'
import { keyBytes, keyRange, prefixEnd } from './etcd-kv.js'
import { groupsOfDistinctKinds } from '../../../core/storage/create-many.js'
import { mustWrite, StoredValues } from '../../../core/storage/value/stored-values.js'
import { encryptCheckTransformer, type ValueTransformer } from '../../../core/storage/value/transformer.js'
import { stampRevision } from '../../../core/storage/objects.js'
import { copiedForCaller, decodedInAStep, isLargeValue } from '../../../core/storage/written-object.js'
import { RecentWrites } from './recent-writes.js'
import { LeaseManager } from './etcd-leases.js'
import { EtcdWatch } from './etcd-watch.js'
import type { Census } from './etcd-watch-progress.js'

export interface EtcdStorageOptions extends EtcdConnectionOptions {
  /** How objects become the bytes etcd stores (`codecFor(--storage-media-type)`). */
  codec: ObjectCodec
  /**
   * The value transformer of each key (encryption at rest): etcd holds its output.
   * @default encryptCheckTransformer (the codec's bytes)
   */
  transformerFor?: (key: string) => ValueTransformer
  /** The key the health check reads (upstream: `<--kvstore-prefix>/health`). @default '/registry/health' */
  healthKey?: string
  /** Default interval of BOOKMARK events for watches that ask for them. @default 60000 */
  bookmarkIntervalMs?: number
  /**
   * Keys that expire: seconds to live for a key, or undefined for none. The
   * daemon gives events `--event-ttl` this way; creates and updates of such
   * keys attach a (shared) lease.
   */
  ttlSeconds?: (key: string) => number | undefined
  /** `--lease-reuse-duration-seconds`. @default 60 */
  leaseReuseDurationSeconds?: number
}

/** Upstream's cap on how far a filtering list grows its etcd page (etcd3 store's maxLimit). */
const MAX_FETCH = 10000

/** createMany's transactions in flight at once. */
const MANY_IN_FLIGHT = 16
/** The most objects createMany puts in one transaction: well within etcd's default `--max-txn-ops` (128). */
const MANY_PER_TRANSACTION = 32
/** The most value bytes createMany puts in one transaction with others: well within etcd's default `--max-request-bytes` (1.5 MiB). */
const MANY_TRANSACTION_BYTES = 512 * 1024

/** One read of a key: the object, its revision, the codec's bytes and whether they were read with an older provider. */
interface KeyState {
  obj: KubeObject
  rev: number
  plain: Uint8Array
  stale: boolean
}

export class EtcdStorage implements Storage {
  readonly endpoints: readonly string[]
  private readonly client: EtcdClient
  private readonly codec: ObjectCodec
  private readonly values: StoredValues
  private readonly healthKey: string
  private readonly bookmarkIntervalMs: number
  private readonly ttlSeconds: ((key: string) => number | undefined) | undefined
  private readonly leases: LeaseManager
  private readonly watchers = new Set<EtcdWatch>()
  /** What this process wrote last, for its watches' events of those writes. */
  private readonly recentWrites = new RecentWrites()
  private compactor: EtcdCompactor | undefined
  /** The newest revision this process compacted (reported with Compacted errors). */
  private compacted: number | undefined

  constructor(opts: EtcdStorageOptions) {
    this.endpoints = [...opts.endpoints]
    this.client = new EtcdClient(opts)
    this.codec = opts.codec
    this.values = new StoredValues(opts.codec, opts.transformerFor ?? (() => encryptCheckTransformer))
    this.healthKey = opts.healthKey ?? '/registry/health'
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60000
    this.ttlSeconds = opts.ttlSeconds
    this.leases = new LeaseManager((ttl) => this.client.leaseGrant(ttl), { reuseDurationSeconds: opts.leaseReuseDurationSeconds })
  }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    const { plain, stored } = await this.values.encode(key, obj)
    const value = Buffer.from(stored)
    const put = await this.putOp(key, value)
    const res = await this.write(key, value, plain, [{ key: keyBytes(key), target: 'Create', result: 'Equal', create_revision: 0 }], put)
    if ('written' in res) return res.written
    const existing = existingKv(res.refused)
    throw keyExists(key, existing ? existing.mod_revision : undefined)
  }

  /**
   * A transaction per group of objects (groupsOfDistinctKinds), MANY_IN_FLIGHT
   * at once, its puts guarded by every key being free, nothing read back (no
   * watch of this process waits for these writes). A group's objects share
   * its revision; no two of one kind do, since a watch cache following a
   * resource's prefix takes events at one revision for a single change.
   */
  async createMany(objects: readonly (readonly [key: string, obj: KubeObject])[]): Promise<number[]> {
    const revisions = objects.map(() => 0)
    const groups = groupsOfDistinctKinds(objects, MANY_PER_TRANSACTION)
    let next = 0
    let taken = false
    /** Creates the objects at `indexes` in one transaction; false when a key was taken. */
    const send = async (indexes: readonly number[], compare: Compare[], success: RequestOp[]): Promise<boolean> => {
      let res: TxnResponse
      try {
        res = await this.client.txn({ compare, success, failure: [] })
      } catch (err) {
        throw this.mapError(objects[indexes[0]!]![0], err)
      }
      if (res.succeeded) for (const i of indexes) revisions[i] = res.header.revision
      return res.succeeded
    }
    const writer = async (): Promise<void> => {
      while (!taken && next < groups.length) {
        const group = groups[next++]!
        let indexes: number[] = []
        let compare: Compare[] = []
        let success: RequestOp[] = []
        let bytes = 0
        for (const i of group) {
          const [key, obj] = objects[i]!
          const value = Buffer.from((await this.values.encode(key, obj)).stored)
          // Large objects go in transactions of their own size (etcd refuses requests over --max-request-bytes).
          if (indexes.length > 0 && bytes + value.length > MANY_TRANSACTION_BYTES) {
            if (!(await send(indexes, compare, success))) {
              taken = true
              return
            }
            indexes = []
            compare = []
            success = []
            bytes = 0
          }
          indexes.push(i)
          compare.push({ key: keyBytes(key), target: 'Create', result: 'Equal', create_revision: 0 })
          success.push(await this.putOp(key, value))
          bytes += value.length
        }
        if (!(await send(indexes, compare, success))) taken = true
      }
    }
    await Promise.all(Array.from({ length: Math.min(MANY_IN_FLIGHT, groups.length) }, writer))
    return revisions
  }

  async get(key: string, opts: ReadOptions = {}): Promise<KubeObject | undefined> {
    const wanted = parseResourceVersion(key, opts.resourceVersion)
    const exact = wanted !== undefined && opts.resourceVersionMatch === 'Exact'
    const res = await this.range(key, {
      key: keyBytes(key),
      ...(exact ? { revision: wanted } : {}),
      serializable: opts.resourceVersion === '0',
    })
    const current = res.header.revision
    if (wanted !== undefined && !exact && wanted > current) throw tooLarge(key, opts.resourceVersion ?? wanted, current)
    const kv = res.kvs[0]
    return kv ? this.decode(kv) : undefined
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0
    const predicate = opts.predicate
    const continuing = Boolean(opts.continue)
    let start = keyBytes(prefix)
    /** The revision every page reads at; 0 until the first answer fixes it. */
    let revision = 0
    let atLeast: number | undefined
    if (opts.continue) {
      const token = decodeContinue(opts.continue, prefix)
      start = keyBytes(token.startKey)
      if (token.revision !== CONTINUE_AT_LATEST) revision = token.revision
    } else {
      const wanted = parseResourceVersion(prefix, opts.resourceVersion)
      if (opts.resourceVersionMatch === 'Exact') revision = wanted ?? 0
      else atLeast = wanted
    }
    const end = prefixEnd(prefix)
    const items: KubeObject[] = []
    let fetch = limit
    let lastKey: Buffer | undefined
    let more = false
    let count = 0
    // As upstream: keep fetching (doubling the page, up to MAX_FETCH) until
    // the filtered page is full or the range is exhausted, all at one revision.
    for (;;) {
      const res = await this.range(
        prefix,
        { key: start, range_end: end, limit: fetch, revision, serializable: !continuing && opts.resourceVersion === '0' },
        continuing,
      )
      if (revision === 0) {
        revision = res.header.revision
        if (atLeast !== undefined && atLeast > revision) throw tooLarge(prefix, opts.resourceVersion ?? atLeast, revision)
      }
      more = res.more
      count = res.count
      for (const kv of res.kvs) {
        if (limit && items.length >= limit) {
          more = true
          break
        }
        lastKey = kv.key
        const obj = await this.decode(kv)
        if (!predicate || predicate(obj)) items.push(obj)
      }
      if (!more || !limit || items.length >= limit || !lastKey) break
      fetch = Math.min(fetch * 2, Math.max(MAX_FETCH, limit))
      start = Buffer.concat([lastKey, Buffer.from([0])])
    }
    const result: ListResult = { items, revision }
    if (more && lastKey) {
      result.continue = encodeContinue(`${lastKey.toString('utf8')}\u0000`, prefix, revision)
      // etcd counts keys, not matches, so the count is only given without a predicate.
      if (!predicate) result.remainingItemCount = count - items.length
    }
    return result
  }

  /**
   * As upstream's GuaranteedUpdate: from the caller's suggestion (the watch
   * cache's copy) when there is one, which saves a read; a guess that proves
   * wrong (a failed guard, preconditions or `tryUpdate` failing on it, or no
   * change to write) is replaced by the key's current state and tried again.
   */
  async guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts: UpdateOptions = {}): Promise<KubeObject> {
    let current = !opts.suggestion
    let state = opts.suggestion ? await this.suggested(key, opts.suggestion) : await this.read(key)
    const fresh = async () => {
      current = true
      return this.read(key)
    }
    for (;;) {
      if (!state) throw keyNotFound(key)
      let updated: KubeObject
      try {
        checkPreconditions(key, state.obj, opts.preconditions)
        // The guess is the caller's and may be frozen: the update runs on a copy of it.
        updated = await tryUpdate(current ? state.obj : await copiedForCaller(state.obj))
      } catch (err) {
        if (current) throw err
        state = await fresh()
        continue
      }
      const next = await this.values.encode(key, updated)
      // As upstream: identical bytes mean nothing to write, and the resourceVersion stays, unless the
      // value was read with an older provider or key: then it is written again with the current one.
      if (!mustWrite(state, next.plain)) {
        // `tryUpdate` may have changed the object it was given: the answer is decoded again.
        if (current) return stampRevision(this.codec.decode(state.plain), state.rev)
        // The guess said nothing changes: etcd's bytes decide. The same bytes answer without a write and
        // without running `tryUpdate` again, as upstream's GuaranteedUpdate; other bytes start over from them.
        const checked = await this.unchangedOrCurrent(key, state.rev, next.plain)
        // The guess is the caller's and may be frozen: the answer is a copy of it, unless the caller only reads it.
        if (checked === UNCHANGED) return opts.readOnly ? state.obj : cloneJson(state.obj)
        current = true
        state = checked
        if (state && !mustWrite(state, next.plain)) return state.obj
        continue
      }
      const value = Buffer.from(next.stored)
      const res = await this.write(key, value, next.plain, [modRevisionIs(key, state.rev)], await this.putOp(key, value))
      if ('written' in res) return res.written
      // Another write landed in between (or the guess was old): start over from the state etcd sent back.
      state = await this.stateOf(existingKv(res.refused))
      current = true
    }
  }

  /**
   * As upstream's conditionalDelete: from the caller's suggestion (the watch
   * cache's copy) when there is one, which saves a read, guarded by its
   * revision; a guess that fails the preconditions or `validate` is checked
   * against the key's current state before its error counts.
   */
  async delete(key: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    let current = !opts.suggestion
    let state = opts.suggestion ? await this.suggested(key, opts.suggestion) : await this.read(key)
    for (;;) {
      if (!state) throw keyNotFound(key)
      try {
        checkPreconditions(key, state.obj, opts.preconditions)
        if (opts.validate) await opts.validate(stampRevision(this.codec.decode(state.plain), state.rev))
      } catch (err) {
        if (current) throw err
        // The guess may be old: its error stands only if the current state is the same one.
        const guessed = state.rev
        state = await this.read(key)
        current = true
        if (state?.rev === guessed) throw err
        continue
      }
      const res = await this.txn(key, [modRevisionIs(key, state.rev)], { request_delete_range: { key: keyBytes(key) } })
      // The guess is the caller's and may be frozen: the answer is a copy of it.
      if (res.succeeded) return stampRevision(current ? state.obj : cloneJson(state.obj), res.header.revision)
      // Changed meanwhile, or the guess was old: check the state etcd sent back, as upstream's conditionalDelete.
      state = await this.stateOf(existingKv(res))
      current = true
    }
  }

  watch(prefix: string, opts: WatchOptions = {}): Watcher {
    // A watch may end inside its constructor (a malformed resourceVersion, an aborted signal).
    let created: EtcdWatch | undefined
    const watch = new EtcdWatch(prefix, opts, {
      openStream: (handlers) => this.client.watchStream(handlers),
      // An event of this process's own write takes the object decoded for the write's answer (recent-writes.ts).
      decode: async (kv) => this.recentWrites.take(kv.key.toString('utf8'), kv.value, kv.mod_revision) ?? this.decode(kv),
      snapshot: (range) => this.snapshot(range),
      countAt: async (range, revision) => (await this.range(range, { ...keyRange(range), revision, count_only: true })).count,
      census: (range) => this.census(range),
      mapError: (k, err) => this.mapError(k, err),
      bookmarkIntervalMs: this.bookmarkIntervalMs,
      release: () => created && this.watchers.delete(created),
    })
    if (!watch.ended) {
      created = watch
      this.watchers.add(watch)
    }
    return watch
  }

  async count(prefix: string): Promise<number> {
    const res = await this.range(prefix, { key: keyBytes(prefix), range_end: prefixEnd(prefix), count_only: true })
    return res.count
  }

  async currentRevision(): Promise<number> {
    const res = await this.range(this.healthKey, { key: keyBytes(this.healthKey), count_only: true })
    return res.header.revision
  }

  /** Ends every watch, stops the compactor, then closes the connections (in that order, or the process cannot exit). */
  async close(): Promise<void> {
    for (const w of [...this.watchers]) w.stop()
    this.compactor?.stop()
    this.client.close()
  }

  /**
   * Discards etcd's history up to `revision` (clamped to the current one):
   * reads at older revisions and watches from them then fail with Compacted.
   * A revision already compacted is not an error.
   */
  async compact(revision: number): Promise<void> {
    const upTo = Math.min(revision, await this.currentRevision())
    try {
      await this.client.compact(upTo, true)
    } catch (err) {
      if (!isCompactedError(err)) throw this.mapError('', err)
    }
    this.compacted = Math.max(this.compacted ?? 0, upTo)
  }

  /**
   * Compacts every `intervalMs` the revision seen one interval earlier, taking
   * turns with other API servers through etcd (etcd-compactor.ts). 0 disables
   * it (`--kvstore-compaction-interval=0`). Stopped by close().
   */
  startCompactor(intervalMs: number, onError?: (err: unknown) => void): EtcdCompactor {
    this.compactor?.stop()
    this.compactor = new EtcdCompactor(this.client, (rev) => this.compact(rev), intervalMs, onError)
    return this.compactor
  }

  /**
   * Resolves when etcd answers a quorum read of the health key within
   * `timeoutMs`; rejects with the reason otherwise (for /healthz/etcd and
   * /readyz/etcd, with upstream's wording).
   */
  async checkHealth(timeoutMs: number): Promise<void> {
    try {
      await this.client.range({ key: keyBytes(this.healthKey), count_only: true }, timeoutMs)
    } catch (err) {
      throw new Error(`error getting data from etcd: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  /** The database size the member this client talks to reports (Maintenance.Status dbSize), within `timeoutMs`. */
  async dbSizeBytes(timeoutMs: number): Promise<number> {
    return (await this.client.status(timeoutMs)).dbSize
  }

  // --- etcd calls -----------------------------------------------------------

  private async range(key: string, req: RangeRequest, continuing = false): Promise<RangeResponse> {
    try {
      return await this.client.range(req)
    } catch (err) {
      if (isCompactedError(err)) throw readCompacted(key, continuing, this.compacted)
      if (isFutureRevisionError(err)) throw tooLarge(key, Number(req.revision), await this.currentRevision())
      throw this.mapError(key, err)
    }
  }

  /** If `compare` holds, `success`; else read the key back (a conflict's fresh state). */
  private async txn(key: string, compare: Compare[], success: RequestOp): Promise<TxnResponse> {
    try {
      return await this.client.txn({ compare, success: [success], failure: [{ request_range: { key: keyBytes(key) } }] })
    } catch (err) {
      throw this.mapError(key, err)
    }
  }

  private async putOp(key: string, value: Buffer): Promise<RequestOp> {
    const ttl = this.ttlSeconds?.(key)
    if (!ttl || ttl <= 0) return { request_put: { key: keyBytes(key), value } }
    let lease: string
    try {
      lease = await this.leases.leaseFor(ttl)
    } catch (err) {
      throw this.mapError(key, err)
    }
    return { request_put: { key: keyBytes(key), value, lease } }
  }

  /** A state from the caller's object: its resourceVersion as the revision, its encoding as the bytes (never marked stale). */
  private async suggested(key: string, suggestion: KubeObject): Promise<KeyState | undefined> {
    const suggested = Number(suggestion.metadata.resourceVersion)
    if (!Number.isSafeInteger(suggested) || suggested <= 0) return this.read(key)
    // This process wrote the key since the cache's copy: its own write is the better guess.
    const obj = this.recentWrites.newerThan(key, suggested) ?? suggestion
    return { obj, rev: Number(obj.metadata.resourceVersion), plain: this.codec.encode(obj), stale: false }
  }

  /**
   * Whether the key still holds, at revision `rev`, the bytes `plain`; if not, its current state. Where the
   * stored bytes are the codec's (no encryption), etcd compares them itself and sends no value back when they
   * match: a no-op update then decodes nothing, where reading the key would decode the whole object.
   */
  private async unchangedOrCurrent(key: string, rev: number, plain: Uint8Array): Promise<typeof UNCHANGED | KeyState | undefined> {
    if (!this.values.storesCodecBytes(key)) return this.read(key)
    const k = keyBytes(key)
    const res = await this.txn(
      key,
      [modRevisionIs(key, rev), { key: k, target: 'Value', result: 'Equal', value: plain }],
      { request_range: { key: k, keys_only: true } },
    )
    return res.succeeded ? UNCHANGED : this.stateOf(existingKv(res))
  }

  private async read(key: string): Promise<KeyState | undefined> {
    return this.stateOf((await this.range(key, { key: keyBytes(key) })).kvs[0])
  }

  private async stateOf(kv: KeyValue | undefined): Promise<KeyState | undefined> {
    if (!kv) return undefined
    const rev = kv.mod_revision
    const { object, plain, stale } = await this.values.decode(kv.key.toString('utf8'), kv.value)
    return { obj: stampRevision(object, rev), rev, plain, stale }
  }

  /**
   * A guarded put of `value` (whose codec bytes are `plain`): the object
   * written, decoded from `plain` and stamped with the write's revision, or
   * etcd's answer when the guard failed. The object is decoded before the write is sent, so that the watch
   * event of the write finds it whether it comes before the answer or after
   * (recent-writes.ts).
   */
  private async write(
    key: string,
    value: Buffer,
    plain: Uint8Array,
    compare: Compare[],
    put: RequestOp,
  ): Promise<{ written: KubeObject } | { refused: TxnResponse }> {
    // A small value without an await: the transaction goes out in this turn's frames.
    const object = isLargeValue(plain) ? await decodedInAStep(this.codec, plain) : this.codec.decode(plain)
    this.recentWrites.sending(key, value, object, plain.length)
    let res: TxnResponse
    try {
      res = await this.txn(key, compare, put)
    } catch (err) {
      this.recentWrites.failed(key, value)
      throw err
    }
    if (!res.succeeded) {
      this.recentWrites.failed(key, value)
      return { refused: res }
    }
    this.recentWrites.succeeded(key, value, res.header.revision)
    return { written: stampRevision(object, res.header.revision) }
  }

  /** A stored value as its object (through its key's transformer), stamped with the key's mod_revision. */
  private async decode(kv: KeyValue): Promise<KubeObject> {
    const { object } = await this.values.decode(kv.key.toString('utf8'), kv.value)
    return stampRevision(object, kv.mod_revision)
  }

  /** The objects a watch from ""/"0" starts with, paged so a large range never arrives as one message. */
  private async snapshot(range: string): Promise<{ objects: KubeObject[]; revision: number }> {
    if (!range.endsWith('/')) {
      const res = await this.range(range, { key: keyBytes(range) })
      return { objects: await Promise.all(res.kvs.map((kv) => this.decode(kv))), revision: res.header.revision }
    }
    const objects: KubeObject[] = []
    let page = await this.list(range, { limit: 500 })
    objects.push(...page.items)
    while (page.continue) {
      page = await this.list(range, { limit: 500, continue: page.continue })
      objects.push(...page.items)
    }
    return { objects, revision: page.revision }
  }

  /** One transaction, so both answers are at one revision: the range's key count and its newest change. */
  private async census(range: string): Promise<Census> {
    let res: TxnResponse
    try {
      res = await this.client.txn({
        success: [
          { request_range: { ...keyRange(range), count_only: true } },
          { request_range: { ...keyRange(range), keys_only: true, sort_target: 'Mod', sort_order: 'Descend', limit: 1 } },
        ],
      })
    } catch (err) {
      throw this.mapError(range, err)
    }
    const newest = res.responses[1]?.response_range?.kvs[0]
    return {
      revision: res.header.revision,
      keys: res.responses[0]?.response_range?.count ?? 0,
      newest: newest ? newest.mod_revision : 0,
    }
  }

  private mapError(key: string, err: unknown): unknown {
    if (err instanceof StorageError) return err
    return isUnavailableError(err) ? unavailable(key, this.endpoints, err) : (tooLargeRequest(key, err) ?? err)
  }
}

/** What `unchangedOrCurrent` answers when the key holds the bytes at the revision it was asked about. */
const UNCHANGED = Symbol('unchanged')

function modRevisionIs(key: string, rev: number): Compare {
  return { key: keyBytes(key), target: 'Mod', result: 'Equal', mod_revision: rev }
}

/** The key's state in a failed transaction's `failure` branch (absent when it was deleted meanwhile). */
function existingKv(res: TxnResponse): KeyValue | undefined {
  return res.responses[0]?.response_range?.kvs[0]
}
