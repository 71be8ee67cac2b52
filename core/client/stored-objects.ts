/**
 * Objects as stored, reached below the API: no request through the chain,
 * no authorization, reads without admission. What upstream's components
 * reach through their storage rather than a client: a token request reading
 * the service account and the objects a token is bound to, the
 * node-restriction plugin's lookups on a kubelet's writes, the namespace
 * NamespaceLifecycle checks on every write. Reads stay in memory (or on the
 * server's own store), never a round trip. The registry implements it.
 */
import type { KubeObject, UserInfo } from '../machinery/object.js'
import type { GroupVersionResource } from './informer-factory.js'

/** Who a write below the API is made as, and when. */
export interface StoredWriteContext {
  readonly user: UserInfo
  readonly now: Date
  /** The manager the write is recorded under in managedFields. */
  readonly fieldManager?: string
}

export interface StoredObjects {
  /**
   * The stored object, or a 404 worded as the API words it (also for a resource not served).
   * `readOnly`: only looked at, never changed, so storage may hand out its own copy.
   */
  get(resource: GroupVersionResource, namespace: string, name: string, options?: { readOnly?: boolean }): Promise<KubeObject>
  /** The stored object, or undefined; `cached`: the watch cache's copy (read-only, not to be changed), answered at once. */
  find(resource: GroupVersionResource, namespace: string, name: string, options?: { cached?: boolean }): Promise<KubeObject | undefined>
  /** The stored objects of a namespace (every namespace: ''), as storage lists them; `readOnly` as for get. */
  list(resource: GroupVersionResource, namespace: string, options?: { readOnly?: boolean }): Promise<KubeObject[]>
  /** Creates the object as the resource's store does for a request (admission, validation), without the request. */
  create(resource: GroupVersionResource, namespace: string, object: KubeObject, context: StoredWriteContext): Promise<KubeObject>
  /** Deletes the object as the resource's store does for a request (admission, finalizers), without the request. */
  delete(resource: GroupVersionResource, namespace: string, name: string, context: StoredWriteContext): Promise<void>
  /** Updates the object (or its status) with what `next` makes of the current one, retried on conflicts as the store does. */
  update(
    resource: GroupVersionResource,
    namespace: string,
    name: string,
    next: (current: KubeObject) => KubeObject,
    context: StoredWriteContext,
    subresource?: 'status',
  ): Promise<KubeObject>
}
