/**
 * The activity log (`options.record`): what a test asserts on after the
 * code under test ran against an embedded server, as client-go's fake
 * clientset records its actions. Two bounded lists:
 *
 * - requests: each answered request with the caller, the request info
 *   (verb, resource, namespace, name) and the status code;
 * - events: each change written to storage (ADDED, MODIFIED, DELETED) with
 *   the object as stored, whoever made it: a client's request or one of the
 *   server's controllers (namespace deletion, garbage collection, ...).
 *
 * Both are recorded when the request or write completes, before its answer
 * reaches the caller: a test that awaited a request finds it, and the writes
 * it made, without waiting. Off by default; when on, each list keeps the
 * newest `limit` entries, so a long-running server does not grow.
 */
import type { MiddlewareHandler } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { cloneJson, type KubeObject, type UserInfo } from '../machinery/object.js'
import type { StorageFactory, StorageResource } from '../storage/factory.js'
import type { Storage, TryUpdate } from '../storage/interface.js'

/** `options.record`: `true` for the default bounds. */
export type RecordOptions = boolean | { /** Entries kept in each list; the oldest go first. @default 1000 */ limit?: number }

/** One answered request. The resource fields are empty for a non-resource path (`/healthz`, `/apis`). */
export interface RecordedRequest {
  /** The HTTP method. */
  method: string
  /** The URL path, without the query. */
  path: string
  /** The query string, with its `?`, or ''. */
  query: string
  /** Who the request ran as (after impersonation); undefined when it was not authenticated (a 401). */
  user?: { username: string; groups: readonly string[] }
  /** The API verb as authorization sees it (`get`, `list`, `watch`, `create`, `patch`, `deletecollection`, ...); the lowercase method for a non-resource path. */
  verb: string
  isResourceRequest: boolean
  /** '' for the core group. */
  apiGroup: string
  apiVersion: string
  resource: string
  subresource: string
  namespace: string
  name: string
  /** The status code of the answer (for a watch: of its start). */
  status: number
  /** When it was answered, by the server's clock (`ports.now`). */
  at: Date
}

/** One change written to storage. */
export interface RecordedEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  /** The resource's group ('' for the core group) and plural name, as stored (a Deployment is `apps`/`deployments`). */
  group: string
  resource: string
  /** '' for a cluster-scoped object. */
  namespace: string
  name: string
  /** The object as stored after the change; for DELETED, its last state. A frozen copy: clone it to change it. */
  object: KubeObject
  /** The object's resourceVersion after the change. */
  resourceVersion: string
  /** When it was written, by the server's clock. */
  at: Date
}

/** `ApiServer.activity`: read and clear what the server recorded (`options.record`). */
export interface ActivityLog {
  /** Whether the server records (`options.record`); when false, the readers throw rather than look empty. */
  readonly enabled: boolean
  /** The requests answered since the server became ready (or the last `clear()`/`reset()`), oldest first. */
  requests(): RecordedRequest[]
  /** The changes written since the server became ready (or the last `clear()`/`reset()`), oldest first. */
  events(): RecordedEvent[]
  /** How many entries of each list were dropped to keep within `limit` since the last clear. */
  dropped(): { requests: number; events: number }
  /**
   * The first change recorded since the last `clear()`/`reset()` that
   * `match` accepts, now or once it is written: for what the server's
   * controllers do after an answer (a namespace's objects deleted, a garbage
   * collected dependent). Rejects after `timeoutMs` (default 10000), naming
   * what it waited for.
   */
  waitForEvent(match: (event: RecordedEvent) => boolean, options?: { timeoutMs?: number; description?: string }): Promise<RecordedEvent>
  /** Forgets everything recorded so far. */
  clear(): void
}

export const DEFAULT_WAIT_MS = 10_000

export const DEFAULT_RECORD_LIMIT = 1000

/** A list that keeps its newest `limit` entries. */
class BoundedList<T> {
  private items: T[] = []
  dropped = 0
  constructor(private readonly limit: number) {}
  push(item: T): void {
    this.items.push(item)
    // Trimmed in batches, so that a full list does not shift on every push.
    if (this.items.length >= this.limit * 2) {
      const excess = this.items.length - this.limit
      this.items = this.items.slice(excess)
      this.dropped += excess
    }
  }
  read(): T[] {
    const excess = Math.max(0, this.items.length - this.limit)
    return this.items.slice(excess)
  }
  droppedCount(): number {
    return this.dropped + Math.max(0, this.items.length - this.limit)
  }
  clear(): void {
    this.items = []
    this.dropped = 0
  }
}

/** The recorder behind `ApiServer.activity`: the server feeds it through `requestFilter` and `recordingStorage`. */
export class ActivityRecorder implements ActivityLog {
  readonly enabled: boolean
  /** Nothing is recorded before the server is ready: start-up's own writes are not the test's. */
  private recording = false
  private readonly requestList: BoundedList<RecordedRequest>
  private readonly eventList: BoundedList<RecordedEvent>
  /** waitForEvent callers not yet answered, each with its test. */
  private readonly waiters = new Set<(event: RecordedEvent) => boolean>()

  constructor(
    options: RecordOptions | undefined,
    private readonly now: () => Date,
  ) {
    this.enabled = options !== undefined && options !== false
    const limit = typeof options === 'object' ? (options.limit ?? DEFAULT_RECORD_LIMIT) : DEFAULT_RECORD_LIMIT
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`options.record.limit must be a positive integer, not ${limit}`)
    this.requestList = new BoundedList(limit)
    this.eventList = new BoundedList(limit)
  }

  /** Called once the server is ready: recording starts from an empty log. */
  start(): void {
    this.clear()
    this.recording = this.enabled
  }

  requests(): RecordedRequest[] {
    this.checkEnabled()
    return this.requestList.read()
  }

  events(): RecordedEvent[] {
    this.checkEnabled()
    return this.eventList.read()
  }

  dropped(): { requests: number; events: number } {
    this.checkEnabled()
    return { requests: this.requestList.droppedCount(), events: this.eventList.droppedCount() }
  }

  waitForEvent(match: (event: RecordedEvent) => boolean, options: { timeoutMs?: number; description?: string } = {}): Promise<RecordedEvent> {
    this.checkEnabled()
    let found: RecordedEvent | undefined
    try {
      found = this.eventList.read().find(match)
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
    if (found) return Promise.resolve(found)
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS
    return new Promise((resolve, reject) => {
      // Runs inside a storage write: a test's predicate that throws rejects its wait, never the write.
      const waiter = (event: RecordedEvent): boolean => {
        try {
          if (!match(event)) return false
          resolve(event)
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)))
        }
        clearTimeout(timer)
        return true
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new Error(`no recorded event ${options.description ? `(${options.description}) ` : ''}matched within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.add(waiter)
    })
  }

  clear(): void {
    this.requestList.clear()
    this.eventList.clear()
  }

  /** The chain filter that records each answered request; undefined when recording is off. */
  requestFilter(): MiddlewareHandler<ChainEnv> | undefined {
    if (!this.enabled) return undefined
    return async (c, next) => {
      await next()
      if (!this.recording) return
      const info = c.get('requestInfo')
      const user = c.get('user') as UserInfo | undefined
      const url = new URL(c.req.url)
      this.requestList.push({
        method: c.req.method,
        path: url.pathname,
        query: url.search,
        ...(user ? { user: { username: user.username, groups: [...(user.groups ?? [])] } } : {}),
        verb: info.verb,
        isResourceRequest: info.isResourceRequest,
        apiGroup: info.apiGroup,
        apiVersion: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        name: info.name,
        status: c.res.status,
        at: this.now(),
      })
    }
  }

  /** The factory the registry stores through, recording each write; the given one itself when recording is off. */
  recordingFactory(factory: StorageFactory): StorageFactory {
    if (!this.enabled) return factory
    return { storageFor: (resource) => this.recordingStorage(factory.storageFor(resource), resource) }
  }

  private recordingStorage(storage: Storage, resource: StorageResource): Storage {
    const record = (type: RecordedEvent['type'], object: KubeObject): void => {
      if (!this.recording) return
      const copy = deepFreeze(cloneJson(object))
      const event: RecordedEvent = Object.freeze({
        type,
        group: resource.group,
        resource: resource.resource,
        namespace: copy.metadata?.namespace ?? '',
        name: copy.metadata?.name ?? '',
        object: copy,
        resourceVersion: copy.metadata?.resourceVersion ?? '',
        at: this.now(),
      })
      this.eventList.push(event)
      for (const waiter of this.waiters) if (waiter(event)) this.waiters.delete(waiter)
    }
    return {
      get: (key, opts) => storage.get(key, opts),
      list: (prefix, opts) => storage.list(prefix, opts),
      watch: (prefix, opts) => storage.watch(prefix, opts),
      count: (prefix) => storage.count(prefix),
      currentRevision: () => storage.currentRevision(),
      close: () => storage.close(),
      async create(key: string, obj: KubeObject) {
        const created = await storage.create(key, obj)
        record('ADDED', created)
        return created
      },
      async guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: Parameters<Storage['guaranteedUpdate']>[2]) {
        // An update that changes nothing is not written (the resourceVersion stays), so it is no event.
        let before: string | undefined
        const updated = await storage.guaranteedUpdate(
          key,
          (current) => {
            before = current.metadata?.resourceVersion
            return tryUpdate(current)
          },
          opts,
        )
        if (updated.metadata?.resourceVersion !== before) record('MODIFIED', updated)
        return updated
      },
      async delete(key: string, opts?: Parameters<Storage['delete']>[1]) {
        const deleted = await storage.delete(key, opts)
        record('DELETED', deleted)
        return deleted
      },
    }
  }

  private checkEnabled(): void {
    if (!this.enabled) throw new Error('the server records no activity: create it with options.record (createApiServer({ record: true }))')
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
