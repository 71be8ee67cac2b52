/**
 * The garbage collector, started once it has something to look at.
 *
 * The collector lists and then watches every stored resource (some sixty
 * loops), which made a quarter of the start of a test's in-process server,
 * though most tests never write an object that has an owner. Until an
 * object with owner references, or with a finalizer the collector acts on
 * (orphan, foregroundDeletion), is in the watch caches, only the caches'
 * objects are looked at as they arrive, whoever wrote them (another server
 * on the same store too). The first such object starts the collector,
 * which lists everything from there, as it does at start-up: nothing it
 * would have done is missed, since nothing owned existed before.
 *
 * Where some resource may be stored without a watch cache, whose objects
 * would go unseen, the collector starts at once.
 */
import type { Logger } from '../logging/logger.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../machinery/finalizers.js'
import type { KubeObject } from '../machinery/object.js'
import type { ObjectObserver } from '../storage/cacher.js'
import { type GarbageCollectorOptions, startGarbageCollector } from './garbage-collector.js'
import type { StoredResources } from './stored-resources.js'

/** Tells an observer of every stored object, present and to come, until the function returned is called; undefined when it cannot see them all. */
export type ObserveStoredObjects = (observer: ObjectObserver) => (() => void) | undefined

/** Whether the collector has anything to do with the object: it names owners, or waits on the collector to delete or orphan its dependents. */
export function concernsGarbageCollector(object: KubeObject): boolean {
  const { ownerReferences, finalizers } = object.metadata
  if (ownerReferences && ownerReferences.length > 0) return true
  return finalizers !== undefined && finalizers.some((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER)
}

/** Starts the collector at the first object it concerns (at once without `observe`); returns the function that stops it. */
export function startGarbageCollectorWhenNeeded(
  stores: StoredResources,
  now: () => Date,
  logger: Logger,
  observe: ObserveStoredObjects | undefined,
  options: GarbageCollectorOptions = {},
): () => void {
  let stopCollector: (() => void) | undefined
  let starting = false
  let stopped = false
  const start = (): void => {
    if (stopped || stopCollector) return
    stopObserving?.()
    stopCollector = startGarbageCollector(stores, now, logger, options)
  }
  // Told from inside a cache's load or change: the collector starts once that is through.
  const stopObserving = observe?.((object) => {
    if (starting || !concernsGarbageCollector(object)) return
    starting = true
    const { namespace, name } = object.metadata
    logger.debug({ kind: object.kind, object: namespace ? `${namespace}/${name}` : name }, 'garbage collector starting: an object names an owner or waits on its dependents')
    queueMicrotask(start)
  })
  if (!stopObserving) start()
  return () => {
    stopped = true
    stopObserving?.()
    stopCollector?.()
  }
}
