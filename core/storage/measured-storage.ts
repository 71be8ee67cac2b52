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
import type { KubeObject } from '../machinery/object.js'
import type { DeleteOptions, ListOptions, ListResult, ReadOptions, Storage, TryUpdate, UpdateOptions, Watcher, WatchOptions } from './interface.js'

interface OperationSamples {
  labels: Record<string, string>
  total: { add(): void }
  duration: HistogramHandle
}

/**
 * A class rather than an object of closures: a server wraps every stored resource's storage in one at its start
 * (some sixty), and most of them never see a write.
 */
class MeasuredStorage implements Storage {
  /** Each operation's samples, found on its first call (every call counts and times; errors stay found per error). */
  private samples: Map<string, OperationSamples> | undefined
  private readonly type: string

  constructor(
    private readonly storage: Storage,
    resource: StorageResource,
    private readonly metrics: Metrics,
  ) {
    this.type = resource.group ? `${resource.resource}.${resource.group}` : resource.resource
  }

  create(key: string, obj: KubeObject): Promise<KubeObject> {
    return this.measured('create', () => this.storage.create(key, obj))
  }

  get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined> {
    return this.storage.get(key, opts)
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.storage.list(prefix, opts)
  }

  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: UpdateOptions): Promise<KubeObject> {
    return this.measured('update', () => this.storage.guaranteedUpdate(key, tryUpdate, opts))
  }

  delete(key: string, opts?: DeleteOptions): Promise<KubeObject> {
    return this.measured('delete', () => this.storage.delete(key, opts))
  }

  watch(prefix: string, opts?: WatchOptions): Watcher {
    return this.storage.watch(prefix, opts)
  }

  count(prefix: string): Promise<number> {
    return this.measured('listWithCount', () => this.storage.count(prefix))
  }

  currentRevision(): Promise<number> {
    return this.storage.currentRevision()
  }

  close(): Promise<void> {
    return this.storage.close()
  }

  private samplesOf(operation: string): OperationSamples {
    this.samples ??= new Map()
    let found = this.samples.get(operation)
    if (!found) {
      const labels = { operation, type: this.type }
      found = {
        labels,
        total: this.metrics.counter(ETCD_REQUESTS_TOTAL.name, ETCD_REQUESTS_TOTAL.help, labels),
        duration: this.metrics.histogramOf(ETCD_REQUEST_DURATION, labels),
      }
      this.samples.set(operation, found)
    }
    return found
  }

  private async measured<T>(operation: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now()
    try {
      return await work()
    } catch (err) {
      this.metrics.inc(ETCD_REQUEST_ERRORS, this.samplesOf(operation).labels)
      throw err
    } finally {
      const { total, duration } = this.samplesOf(operation)
      total.add()
      duration.observe((performance.now() - started) / 1000)
    }
  }
}

export function measuredStorage(storage: Storage, resource: StorageResource, metrics: Metrics): Storage {
  return new MeasuredStorage(storage, resource, metrics)
}
