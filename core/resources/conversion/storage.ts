/**
 * A view of the storage in another version of a resource: what the store
 * writes is turned into the stored form on the way in, and every object it
 * reads (gets, lists, watch events, the current object of an update) into
 * the served form on the way out. Selectors see the served form.
 */
import type { VersionConversion } from '../catalogue.js'
import type { KubeObject } from '../object.js'
import type { ListOptions, ListResult, Storage, StorageEvent, TryUpdate, Watcher, WatchOptions } from '../../storage/interface.js'

function servedPredicate(
  predicate: ((obj: KubeObject) => boolean) | undefined,
  conversion: VersionConversion,
): ((obj: KubeObject) => boolean) | undefined {
  return predicate && ((stored) => predicate(conversion.fromStorage(stored)))
}

function convertedWatcher(inner: Watcher, conversion: VersionConversion): Watcher {
  return {
    stop: () => inner.stop(),
    async *[Symbol.asyncIterator](): AsyncIterator<StorageEvent> {
      for await (const event of inner) {
        // A bookmark carries only a resourceVersion: nothing to convert.
        yield event.type === 'BOOKMARK' ? event : { ...event, object: conversion.fromStorage(event.object) }
      }
    },
  }
}

export function convertingStorage(backend: Storage, conversion: VersionConversion): Storage {
  const out = (obj: KubeObject) => conversion.fromStorage(obj)
  return {
    create: async (key, obj) => out(await backend.create(key, conversion.toStorage(obj))),
    get: async (key, opts) => {
      const obj = await backend.get(key, opts)
      return obj && out(obj)
    },
    list: async (prefix: string, opts: ListOptions = {}): Promise<ListResult> => {
      const predicate = servedPredicate(opts.predicate, conversion)
      const result = await backend.list(prefix, { ...opts, ...(predicate ? { predicate } : {}) })
      return { ...result, items: result.items.map(out) }
    },
    guaranteedUpdate: async (key, tryUpdate: TryUpdate, opts) =>
      out(await backend.guaranteedUpdate(key, async (current) => conversion.toStorage(await tryUpdate(out(current))), opts)),
    delete: async (key, opts = {}) => {
      const validate = opts.validate
      const converted = validate ? { ...opts, validate: (current: KubeObject) => validate(out(current)) } : opts
      return out(await backend.delete(key, converted))
    },
    watch: (prefix: string, opts: WatchOptions = {}) => {
      const predicate = servedPredicate(opts.predicate, conversion)
      return convertedWatcher(backend.watch(prefix, { ...opts, ...(predicate ? { predicate } : {}) }), conversion)
    },
    count: (prefix) => backend.count(prefix),
    currentRevision: () => backend.currentRevision(),
    // The backend is shared with every other resource; its owner closes it.
    close: async () => {},
  }
}
