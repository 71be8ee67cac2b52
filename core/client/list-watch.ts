/**
 * Where an informer reads one resource from: a list with its revision, a
 * watch from a revision, and a single read. The server's own components
 * read the storage behind the watch cache (as upstream's loopback informers
 * are served from its cacher), without encoding a byte.
 */
import type { KubeObject } from '../machinery/object.js'
import type { Storage, StorageEvent } from '../storage/interface.js'

export interface ListWatch {
  list(): Promise<{ items: readonly KubeObject[]; revision: number }>
  /** Changes after `revision`; `stop()` ends the iteration. */
  watch(revision: number): AsyncIterable<StorageEvent> & { stop(): void }
  get(namespace: string, name: string): Promise<KubeObject | undefined>
}

/** What a resource's store offers to be read: its storage, the key prefix of all its objects, and an object's key. */
export interface StoredResource {
  readonly storage: Storage
  prefix(namespace: string): string
  key(namespace: string, name: string): string
}

/**
 * Reads the resource `find` answers, asked on each list: a custom
 * resource's informer may be made before its definition is served, and
 * lists (retrying) until it is. With `namespace`, only that namespace's
 * objects are read (upstream's namespaced informers).
 */
export function storageListWatch(find: () => StoredResource, namespace = ''): ListWatch {
  return {
    list: () => {
      const resource = find()
      // From the watch cache at what it holds, as client-go's reflector lists first (resourceVersion "0"); the watch
      // from the list's revision brings the rest. An informer keeps what it lists as it keeps what a watch delivers:
      // shared, never changed.
      return resource.storage.list(resource.prefix(namespace), { resourceVersion: '0', readOnly: true })
    },
    watch: (revision) => {
      const resource = find()
      // Its events' objects are kept alike: the watch cache's own, not a copy of each per informer.
      return resource.storage.watch(resource.prefix(namespace), { resourceVersion: String(revision), readOnly: true })
    },
    get: (objectNamespace, name) => {
      const resource = find()
      return resource.storage.get(resource.key(objectNamespace, name))
    },
  }
}
