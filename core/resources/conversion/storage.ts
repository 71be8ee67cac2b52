/**
 * A view of the storage in another version of a resource: what the store
 * writes is turned into the stored form on the way in, and every object it
 * reads (gets, lists, watch events, the current object of an update) into
 * the served form on the way out.
 *
 * A conversion may answer at once (the built-in kinds) or with a promise (a
 * custom resource's conversion webhook). The synchronous case takes no extra
 * turn of the event loop per object. Selectors are evaluated by the backend
 * while it pages, synchronously, so an asynchronous conversion must offer
 * `forSelection`: the served form as far as it can be known without waiting
 * (for custom resources: the stored object under the served apiVersion;
 * labels and metadata never change across versions). Filtering after
 * converting would break `limit` (short pages) and cost a webhook call per
 * object the selector refuses.
 */
import type { VersionConversion } from '../catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import type { ListOptions, ListResult, Storage, StorageEvent, TryUpdate, Watcher, WatchOptions } from '../../storage/interface.js'

type Converted = KubeObject | Promise<KubeObject>

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/** An array of plain values stays as it is; a promise among them makes the whole a promise. */
function settleAll(values: Converted[]): KubeObject[] | Promise<KubeObject[]> {
  return values.some(isPromise) ? Promise.all(values) : (values as KubeObject[])
}

function selectionView(conversion: VersionConversion): (stored: KubeObject) => KubeObject {
  if (conversion.forSelection) return (stored) => conversion.forSelection!(stored)
  return (stored) => {
    const served = conversion.fromStorage(stored)
    if (isPromise(served)) {
      // Not silently wrong: a selector cannot wait, and the conversion gave nothing to read at once.
      void served.catch(() => {})
      throw new Error('an asynchronous version conversion must offer forSelection for selectors')
    }
    return served
  }
}

function servedPredicate(
  predicate: ((obj: KubeObject) => boolean) | undefined,
  conversion: VersionConversion,
): ((obj: KubeObject) => boolean) | undefined {
  if (!predicate) return undefined
  const view = selectionView(conversion)
  return (stored) => predicate(view(stored))
}

function convertedWatcher(inner: Watcher, conversion: VersionConversion): Watcher {
  return {
    stop: () => inner.stop(),
    async *[Symbol.asyncIterator](): AsyncIterator<StorageEvent> {
      // One event at a time: a slow conversion holds back the later events, so the order is kept.
      for await (const event of inner) {
        // A bookmark carries only a resourceVersion: nothing to convert.
        if (event.type === 'BOOKMARK') {
          yield event
          continue
        }
        const served = conversion.fromStorage(event.object)
        yield { ...event, object: isPromise(served) ? await served : served }
      }
    },
  }
}

export function convertingStorage(backend: Storage, conversion: VersionConversion): Storage {
  const out = (obj: KubeObject): Converted => conversion.fromStorage(obj)
  const outAll = (items: KubeObject[]): KubeObject[] | Promise<KubeObject[]> =>
    conversion.fromStorageAll && items.length > 1 ? conversion.fromStorageAll(items) : settleAll(items.map(out))
  return {
    create: async (key, obj) => out(await backend.create(key, await conversion.toStorage(obj))),
    get: async (key, opts) => {
      // Conversion may work on what it reads: the cache hands out copies here.
      const obj = await backend.get(key, opts && { ...opts, readOnly: false })
      return obj && out(obj)
    },
    list: async (prefix: string, opts: ListOptions = {}): Promise<ListResult> => {
      const predicate = servedPredicate(opts.predicate, conversion)
      const result = await backend.list(prefix, { ...opts, readOnly: false, ...(predicate ? { predicate } : {}) })
      const items = outAll(result.items)
      return { ...result, items: isPromise(items) ? await items : items }
    },
    guaranteedUpdate: async (key, tryUpdate: TryUpdate, opts) =>
      out(
        await backend.guaranteedUpdate(
          key,
          async (current) => conversion.toStorage(await tryUpdate(await out(current))),
          opts,
        ),
      ),
    delete: async (key, opts = {}) => {
      const validate = opts.validate
      const converted = validate ? { ...opts, validate: async (current: KubeObject) => validate(await out(current)) } : opts
      return out(await backend.delete(key, converted))
    },
    watch: (prefix: string, opts: WatchOptions = {}) => {
      const predicate = servedPredicate(opts.predicate, conversion)
      return convertedWatcher(backend.watch(prefix, { ...opts, readOnly: false, ...(predicate ? { predicate } : {}) }), conversion)
    },
    count: (prefix) => backend.count(prefix),
    currentRevision: () => backend.currentRevision(),
    // The backend is shared with every other resource; its owner closes it.
    close: async () => {},
  }
}
