/**
 * `etcd_request_duration_seconds`, `etcd_requests_total` and
 * `etcd_request_errors_total` by operation and type (the resource, as
 * `<resource>.<group>`), as upstream's etcd3 store records its calls. The
 * decorator sits above the watch cache, so it measures what always reaches
 * the backend: writes and counts. Reads the cache may answer from memory
 * are not measured, so that the figure stays one of the store.
 */
import { ETCD_REQUEST_DURATION, ETCD_REQUEST_ERRORS, ETCD_REQUESTS_TOTAL } from '../metrics/definitions.js'
import type { HistogramHandle, Metrics } from '../metrics/metrics.js'
import type { StorageResource } from './factory.js'
import type { Storage } from './interface.js'

export function measuredStorage(storage: Storage, resource: StorageResource, metrics: Metrics): Storage {
  const type = resource.group ? `${resource.resource}.${resource.group}` : resource.resource
  // Each operation's samples, found on its first call (every call counts and times; errors stay found per error).
  const samples = new Map<string, { labels: Record<string, string>; total: { add(): void }; duration: HistogramHandle }>()
  const samplesOf = (operation: string) => {
    let found = samples.get(operation)
    if (!found) {
      const labels = { operation, type }
      found = { labels, total: metrics.counter(ETCD_REQUESTS_TOTAL.name, ETCD_REQUESTS_TOTAL.help, labels), duration: metrics.histogramOf(ETCD_REQUEST_DURATION, labels) }
      samples.set(operation, found)
    }
    return found
  }
  const measured = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    try {
      return await work()
    } catch (err) {
      metrics.inc(ETCD_REQUEST_ERRORS, samplesOf(operation).labels)
      throw err
    } finally {
      const { total, duration } = samplesOf(operation)
      total.add()
      duration.observe((performance.now() - started) / 1000)
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
