/**
 * The garbage collector, started once it has something to look at
 * (on-demand.ts).
 *
 * The collector lists and then watches every stored resource (some sixty
 * loops), which made a quarter of the start of a test's in-process server,
 * though most tests never write an object that has an owner. The first
 * object with owner references, or with a finalizer the collector acts on
 * (orphan, foregroundDeletion), starts it.
 */
import type { Logger } from '../logging/logger.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../machinery/finalizers.js'
import type { KubeObject } from '../machinery/object.js'
import { type GarbageCollectorOptions, startGarbageCollector } from './garbage-collector.js'
import type { ObserveStoredObjects } from '../storage/server-storage.js'
import { startOnDemand } from './on-demand.js'
import type { StoredResources } from './stored-resources.js'

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
  return startOnDemand(observe, logger, {
    what: 'garbage collector',
    concerns: concernsGarbageCollector,
    start: () => startGarbageCollector(stores, now, logger, options),
  })
}
