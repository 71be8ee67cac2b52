/**
 * `--kvstore-db-metric-poll-interval` (alias `--etcd-db-metric-poll-interval`):
 * the size of each storage cluster's database file, asked of the store every
 * interval and published as upstream's stable
 * `apiserver_storage_size_bytes{storage_cluster_id="etcd-<n>"}`, numbered as
 * upstream numbers its storage monitors: the main store first, then each
 * `--kvstore-servers-overrides` cluster. The embedded store reports its
 * SQLite file as `etcd-0` too, so dashboards read it unchanged.
 */
import type { Logger } from '../logging/logger.js'
import { STORAGE_SIZE } from './definitions.js'
import type { Metrics } from './metrics.js'

/**
 * The database size in bytes of each storage cluster, main store first; a
 * cluster that could not tell (unreachable, timed out) is undefined and
 * keeps its last figure.
 */
export type StorageSizes = () => Promise<readonly (number | undefined)[]>

/** Asks once and publishes what was answered. */
export async function pollStorageSizes(sizes: StorageSizes, metrics: Metrics, logger: Logger): Promise<void> {
  let answers: readonly (number | undefined)[]
  try {
    answers = await sizes()
  } catch (err) {
    logger.debug({ module: 'storage-size', err: String(err) }, 'reading the storage size failed')
    return
  }
  answers.forEach((bytes, i) => {
    if (bytes !== undefined) metrics.gaugeOf(STORAGE_SIZE, { storage_cluster_id: `etcd-${i}` }).set(bytes)
  })
}

/** Polls every `intervalMs`, at once first; 0 (or no way to ask) disables it. Returns the stop function. */
export function startStorageSizePoller(sizes: StorageSizes | undefined, metrics: Metrics, intervalMs: number, logger: Logger): () => void {
  if (!sizes || intervalMs <= 0) return () => {}
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const tick = async (): Promise<void> => {
    await pollStorageSizes(sizes, metrics, logger)
    if (stopped) return
    timer = setTimeout(() => void tick(), intervalMs)
    // A poller alone must not keep a process (or a test) alive.
    ;(timer as { unref?: () => void }).unref?.()
  }
  void tick()
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
