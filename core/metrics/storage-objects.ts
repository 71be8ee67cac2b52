/**
 * `--kvstore-count-metric-poll-period`: how many objects of each stored
 * resource the storage holds, counted every period and published as
 * upstream's `apiserver_storage_objects{resource="<resource>[.<group>]"}`.
 */
import type { Logger } from '../logging/logger.js'
import type { Metrics } from './metrics.js'

export const STORAGE_OBJECTS = 'apiserver_storage_objects'
const HELP = '[STABLE] Number of stored objects at the time of the last count, by resource; -1 when the count failed.'

/** A resource of the catalogue, as counting names it: virtual ones (reviews) store nothing. */
interface CountedResource {
  readonly group: string
  readonly resource: string
  readonly virtualCreate?: unknown
}

/** Where the counts come from: the catalogue's resources, and each one's storage under its key prefix (the registry is one). */
export interface CountedStorage<R extends CountedResource = CountedResource> {
  readonly catalogue: { readonly entries: readonly R[] }
  store(entry: R): { prefix(namespace: string): string; readonly storage: { count(prefix: string): Promise<number> } }
}

/** Counts once for every stored resource; a failed count is published as -1, as upstream does. */
export async function countStorageObjects<R extends CountedResource>(registry: CountedStorage<R>, metrics: Metrics, logger: Logger): Promise<void> {
  const entries = registry.catalogue.entries.filter((e) => !e.virtualCreate)
  // Resources that share storage (events in two groups, HPA versions) are counted once per key prefix.
  const seen = new Set<string>()
  for (const entry of entries) {
    const store = registry.store(entry)
    const prefix = store.prefix('')
    if (seen.has(prefix)) continue
    seen.add(prefix)
    let count = -1
    try {
      count = await store.storage.count(prefix)
    } catch (err) {
      logger.debug({ module: 'storage-objects', resource: entry.resource, err: String(err) }, 'counting stored objects failed')
    }
    metrics.setGauge(STORAGE_OBJECTS, HELP, { resource: entry.group ? `${entry.resource}.${entry.group}` : entry.resource }, count)
  }
}

/**
 * How long after start-up the first count comes (or one period, if that is
 * shorter): the first requests arrive then, and a test's server often
 * lives less than this and never needs the count.
 */
export const FIRST_COUNT_DELAY_MS = 1000

/**
 * Starts the periodic count; 0 disables it. Returns the stop function. The
 * first count waits for `startAfter` (the end of start-up), then for
 * `firstDelayMs`: upstream counts at once, each resource on a goroutine of
 * its own, where here a count is some sixty storage calls on the thread
 * that is writing the bootstrap objects, and then serving the first
 * requests.
 */
export function startStorageObjectCounter<R extends CountedResource>(
  registry: CountedStorage<R>,
  metrics: Metrics,
  periodMs: number,
  logger: Logger,
  startAfter: Promise<unknown> = Promise.resolve(),
  firstDelayMs = Math.min(periodMs, FIRST_COUNT_DELAY_MS),
): () => void {
  if (periodMs <= 0) return () => {}
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const after = (delayMs: number): void => {
    timer = setTimeout(() => void tick(), delayMs)
    // A counter alone must not keep a process (or a test) alive.
    ;(timer as { unref?: () => void }).unref?.()
  }
  const tick = async (): Promise<void> => {
    await countStorageObjects(registry, metrics, logger)
    if (!stopped) after(periodMs)
  }
  startAfter.then(
    () => !stopped && after(firstDelayMs),
    () => {},
  )
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
