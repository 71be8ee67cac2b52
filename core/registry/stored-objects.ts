/**
 * The registry as the server's components reach objects below the API
 * (the StoredObjects port): each call goes to the resource's store as the
 * catalogue serves it, or, for an entry passed itself, to that entry's
 * store even while the catalogue does not serve it.
 */
import type { StoredObjects } from '../client/stored-objects.js'
import { extended } from '../machinery/object.js'
import type { Registry } from './registry.js'

const NOT_DRY_RUN = { dryRun: false } as const

export function storedObjects(registry: Registry): StoredObjects {
  return {
    async get(resource, namespace, name, options) {
      return registry.served(resource).get(namespace, name, undefined, options?.readOnly ?? false)
    },
    async find(resource, namespace, name, options) {
      const store = registry.served(resource)
      const key = store.key(namespace, name)
      // The watch cache's copy, read-only; "0" lets the cache answer at once.
      return options?.cached ? store.storage.get(key, { resourceVersion: '0', readOnly: true }) : store.storage.get(key)
    },
    async list(resource, namespace, options) {
      const store = registry.served(resource)
      const prefix = store.prefix(namespace)
      return (await (options?.readOnly ? store.storage.list(prefix, { readOnly: true }) : store.storage.list(prefix))).items
    },
    async create(resource, namespace, object, context) {
      return registry.served(resource).create(namespace, object, extended(context, NOT_DRY_RUN))
    },
    async delete(resource, namespace, name, context) {
      await registry.served(resource).delete(namespace, name, {}, extended(context, NOT_DRY_RUN))
    },
    async update(resource, namespace, name, next, context, subresource) {
      return registry.served(resource).update(namespace, name, next, extended(context, NOT_DRY_RUN), subresource)
    },
  }
}
