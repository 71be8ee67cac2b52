/**
 * `etcd_request_duration_seconds`, `etcd_requests_total` and
 * `etcd_request_errors_total` by operation and type (the resource, as
 * `<resource>.<group>`), as upstream's etcd3 store records its calls. The
 * decorator sits above the watch cache, so it measures what always reaches
 * the backend: writes and counts. Reads the cache may answer from memory
 * are not measured, so that the figure stays one of the store.
 */
import { ETCD_REQUEST_DURATION, ETCD_REQUEST_ERRORS, ETCD_REQUESTS_TOTAL } from '../metrics/definitions.js'
import type { Metrics } from '../metrics/metrics.js'
import type { StorageResource } from './factory.js'
import type { Storage } from './interface.js'

export function measuredStorage(storage: Storage, resource: StorageResource, metrics: Metrics): Storage {
  const type = resource.group ? `${resource.resource}.${resource.group}` : resource.resource
  const measured = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    const labels = { operation, type }
    try {
      return await work()
    } catch (err) {
      metrics.inc(ETCD_REQUEST_ERRORS, labels)
      throw err
    } finally {
      metrics.inc(ETCD_REQUESTS_TOTAL, labels)
      metrics.record(ETCD_REQUEST_DURATION, labels, (performance.now() - started) / 1000)
    }
  }
  return {
    create: (key, obj) => measured('create', () => storage.create(key, obj)),
    get: (key, opts) => storage.get(key, opts),
    list: (prefix, opts) => storage.list(prefix, opts),
    guaranteedUpdate: (key, tryUpdate, opts) => measured('update', () => storage.guaranteedUpdate(key, tryUpdate, opts)),
    delete: (key, opts) => measured('delete', () => storage.delete(key, opts)),
    watch: (prefix, opts) => storage.watch(prefix, opts),
    count: (prefix) => measured('listWithCount', () => storage.count(prefix)),
    currentRevision: () => storage.currentRevision(),
    close: () => storage.close(),
  }
}
