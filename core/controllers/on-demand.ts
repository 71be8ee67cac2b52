/**
 * A controller started once it has something to look at: at the first
 * stored object it concerns, rather than at start-up. Until then only the
 * stored objects are looked at as they arrive, whoever wrote them (another
 * server on the same store too), through `ObserveStoredObjects`. Nothing
 * the controller would have done is missed, since nothing it concerns
 * existed before; started, it lists everything from there, as at start-up.
 * Where the server cannot see every stored object, the controller starts
 * at once.
 */
import type { Logger } from '../logging/logger.js'
import type { KubeObject } from '../machinery/object.js'
import type { ObserveStoredObjects } from '../storage/server-storage.js'

export interface OnDemand {
  /** What the controller is, for the log line at its start. */
  readonly what: string
  readonly concerns: (object: KubeObject) => boolean
  /** Starts the controller; returns its stop. */
  readonly start: () => () => void
}

/** Starts the controller at the first object it concerns (at once without `observe`); returns the function that stops it. */
export function startOnDemand(observe: ObserveStoredObjects | undefined, logger: Logger, { what, concerns, start }: OnDemand): () => void {
  let stopController: (() => void) | undefined
  let starting = false
  let stopped = false
  const begin = (): void => {
    if (stopped || stopController) return
    stopObserving?.()
    stopController = start()
  }
  // Told from inside a cache's load or change: the controller starts once that is through.
  const stopObserving = observe?.((object) => {
    if (starting || !concerns(object)) return
    starting = true
    const { namespace, name } = object.metadata
    logger.debug({ kind: object.kind, object: namespace ? `${namespace}/${name}` : name }, `${what} starting: an object concerns it`)
    queueMicrotask(begin)
  })
  if (!stopObserving) begin()
  return () => {
    stopped = true
    stopObserving?.()
    stopController?.()
  }
}
