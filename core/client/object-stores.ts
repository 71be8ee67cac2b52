/**
 * The server's own access to a resource's objects below the request path:
 * the strategy, validation and admission of a write still apply, but no
 * filter does (authentication, authorization, audit, priority and fairness),
 * and a read is the store's. The registry's stores are what answers it.
 *
 * Only what upstream also does beneath the API uses it: start-up writes that
 * every server start pays for in count (the bootstrap policy, the system
 * priority classes), leases that keep a server's membership and must not wait
 * in a flow control queue, storage watches of every stored resource (the
 * garbage collector, the namespace and quota controllers), the finalize of a
 * namespace, and a custom resource's storage as its definition changes.
 * Everything else reads through informers and writes through ObjectClient;
 * lookups by group, version and resource below the API are StoredObjects'
 * (stored-objects.ts).
 */
import type { LabelSelector } from '../machinery/label-selector.js'
import type { KubeList, KubeObject, UserInfo } from '../machinery/object.js'
import type { Preconditions, Storage } from '../storage/interface.js'

/** Who writes, and when. */
export interface DirectWriteContext {
  user: UserInfo
  now: Date
  /** Always false here: the server's own writes are real. */
  dryRun: boolean
  /** The manager the write is recorded under in managedFields. */
  fieldManager?: string
}

export interface DirectListQuery {
  labelSelector?: LabelSelector
  allowWatchBookmarks: boolean
}

export interface DirectDeleteOptions {
  preconditions?: Preconditions
  propagationPolicy?: string
}

/** One resource's objects, as its store keeps them (`Entry` is what names the resource: a catalogue entry). */
export interface EntryObjects<Entry = unknown> {
  readonly entry: Entry
  /** Where the objects live, for a watch or a read of every namespace's at once. */
  readonly storage: Storage
  /** The storage key prefix of the namespace's objects (every namespace's with ''). */
  prefix(namespace: string): string
  /** The storage key of one object. */
  key(namespace: string, name: string): string
  /** With `readOnly` the caller only looks at the object: a cached or frozen one comes uncopied. */
  get(namespace: string, name: string, resourceVersion?: string, readOnly?: boolean): Promise<KubeObject>
  /** `readOnly` as for get: the items may be frozen objects (a watch cache's own). */
  list(namespace: string, query: DirectListQuery, readOnly?: boolean): Promise<KubeList>
  create(namespace: string, body: unknown, ctx: DirectWriteContext): Promise<KubeObject>
  /** Reads, changes with `next` and writes, again on a conflict; through `status`, the status alone. */
  update(namespace: string, name: string, next: (current: KubeObject) => unknown, ctx: DirectWriteContext, subresource?: 'status'): Promise<KubeObject>
  delete(namespace: string, name: string, options: DirectDeleteOptions, ctx: DirectWriteContext): Promise<{ object: KubeObject; deleted: boolean }>
  deleteCollection(namespace: string, query: DirectListQuery, options: DirectDeleteOptions, ctx: DirectWriteContext): Promise<KubeList>
}

/** Every resource's stored objects. */
export interface ObjectStores<Entry> {
  /** The entry's objects (a version stored in another version's form read converted). */
  store(entry: Entry): EntryObjects<Entry>
  /** One per stored resource (versions of a resource share their objects): the version kept in storage where there is one. */
  storedResources(): EntryObjects<Entry>[]
  /** Every stored namespaced resource once. */
  namespacedStores(): EntryObjects<Entry>[]
}
