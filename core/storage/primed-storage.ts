/**
 * A store's state the server already holds, as objects, from the moment it
 * wrote them: a start-up template written whole on an empty store, with
 * nothing else written in between. The watch caches' first loads list
 * every resource at once; answered from these objects they need not read
 * back and decode what was just encoded and written (at start-up, with the
 * code still interpreted, most of the cost of loading them).
 *
 * A list is answered from the state only while the store is still at its
 * revision (one question to the store for the loads that arrive together),
 * only for the first consistent list of each resource, without a selector,
 * a continuation or a limit it would pass, and only until `release()`:
 * otherwise it reaches the store, as it would without the state.
 */
import { cloneJson, type KubeObject } from '../machinery/object.js'
import type { StorageFactory, StorageResource } from './factory.js'
import type { ListOptions, ListResult, Storage } from './interface.js'
import { stampRevision } from './objects.js'

export interface KnownState {
  /** Every object under the resources' prefixes, by key, each stamped with the revision it was written at. */
  readonly objects: ReadonlyMap<string, KubeObject>
  /** The store's revision once they were written. */
  readonly revision: number
}

export interface PrimedFactory extends StorageFactory {
  /** Lets go of the state: every read reaches the store from now on. */
  release(): void
}

/** `factory`, whose storages answer the first list of each resource from `state` of `store` (every resource's) while it holds. */
export function primedFactory(factory: StorageFactory, store: Storage, state: KnownState): PrimedFactory {
  let known: KnownState | undefined = state
  const served = new Set<string>()
  // One question for the store's revision serves the loads that arrive while it is out.
  let asking: Promise<number> | undefined
  const storeRevision = (): Promise<number> => {
    asking ??= store.currentRevision().finally(() => (asking = undefined))
    return asking
  }
  const answer = async (prefix: string, opts: ListOptions): Promise<ListResult | undefined> => {
    if (!known || served.has(prefix) || !consistentWhole(opts)) return undefined
    served.add(prefix)
    const at = known.revision
    const current = await storeRevision().catch(() => undefined)
    // Written since: the state is the store's no longer.
    if (current !== at) known = undefined
    if (!known) return undefined
    const items: KubeObject[] = []
    for (const [key, obj] of known.objects) if (key.startsWith(prefix)) items.push(opts.readOnly ? obj : cloneJson(obj))
    if (opts.limit && opts.limit > 0 && items.length > opts.limit) return undefined
    return { items, revision: at }
  }
  const wrapped = new Map<Storage, Storage>()
  return {
    storageFor(resource: StorageResource): Storage {
      const storage = factory.storageFor(resource)
      let primed = wrapped.get(storage)
      if (!primed) {
        primed = primedStorage(storage, answer)
        wrapped.set(storage, primed)
      }
      return primed
    },
    release() {
      known = undefined
    },
  }
}

/** A consistent list of everything under the prefix: what the state answers. */
function consistentWhole(opts: ListOptions): boolean {
  return !opts.predicate && !opts.continue && !opts.resourceVersion && !opts.resourceVersionMatch
}

/** `storage`, but for lists `answer` takes. */
function primedStorage(storage: Storage, answer: (prefix: string, opts: ListOptions) => Promise<ListResult | undefined>): Storage {
  const primed: Storage = {
    create: (key, obj) => storage.create(key, obj),
    get: (key, opts) => storage.get(key, opts),
    list: async (prefix, opts = {}) => (await answer(prefix, opts)) ?? storage.list(prefix, opts),
    guaranteedUpdate: (key, tryUpdate, opts) => storage.guaranteedUpdate(key, tryUpdate, opts),
    delete: (key, opts) => storage.delete(key, opts),
    watch: (prefix, opts) => storage.watch(prefix, opts),
    count: (prefix) => storage.count(prefix),
    currentRevision: () => storage.currentRevision(),
    close: () => storage.close(),
  }
  if (storage.createMany) primed.createMany = (objects) => storage.createMany!(objects)
  return primed
}

/** The objects written, each stamped with its revision, by key: the state a template written whole left. */
export function writtenState(objects: readonly (readonly [key: string, obj: KubeObject])[], revisions: readonly number[]): Map<string, KubeObject> {
  const sorted = objects.map(([key, obj], i) => [key, stampRevision(obj, revisions[i]!)] as const)
  // Keys in order, as a store lists them.
  sorted.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return new Map(sorted)
}
