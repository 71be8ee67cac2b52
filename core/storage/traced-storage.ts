/**
 * Spans around the writes a request makes to storage, named and labelled as
 * upstream's etcd3 store names them (`Create etcd3`, `GuaranteedUpdate etcd3`,
 * `Delete etcd3`, with audit-id, key, type, group and resource), whichever
 * backend is behind: dashboards built on upstream's traces find them. Reads
 * get no span, as upstream's store starts none for them. A decorator, like
 * the watch cache: the backend knows nothing of it.
 */
import { type Attributes, context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { KubeObject } from '../machinery/object.js'
import { activeAuditId } from '../tracing/context.js'
import type { StorageResource } from './factory.js'
import type { Storage } from './interface.js'

/** Runs `work` inside a child span of the active one; only when some span is active (a request's), so background writes stay untraced. */
async function traced<T>(tracer: Tracer, name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  if (!trace.getSpan(context.active())?.isRecording()) return work()
  return tracer.startActiveSpan(name, { attributes: { 'audit-id': activeAuditId(), ...attributes } }, async (span) => {
    try {
      return await work()
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err))
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
      throw err
    } finally {
      span.end()
    }
  })
}

const typeName = (obj: KubeObject): string => (typeof obj.kind === 'string' ? `*${obj.kind}` : '')

export function tracedStorage(storage: Storage, resource: StorageResource, tracer: Tracer): Storage {
  const labels = (key: string): Attributes => ({ key, group: resource.group, resource: resource.resource })
  return {
    create: (key, obj) => traced(tracer, 'Create etcd3', { ...labels(key), type: typeName(obj) }, () => storage.create(key, obj)),
    get: (key, opts) => storage.get(key, opts),
    list: (prefix, opts) => storage.list(prefix, opts),
    guaranteedUpdate: (key, tryUpdate, opts) => traced(tracer, 'GuaranteedUpdate etcd3', labels(key), () => storage.guaranteedUpdate(key, tryUpdate, opts)),
    delete: (key, opts) => traced(tracer, 'Delete etcd3', labels(key), () => storage.delete(key, opts)),
    watch: (prefix, opts) => storage.watch(prefix, opts),
    count: (prefix) => storage.count(prefix),
    currentRevision: () => storage.currentRevision(),
    close: () => storage.close(),
  }
}
