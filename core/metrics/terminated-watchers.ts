/**
 * Upstream's `apiserver_terminated_watchers_total{group,resource}`: watches
 * the watch cache ended because their client read too slowly and its buffer
 * filled (cacher/metrics, TerminatedWatchersCounter).
 */
import type { Metrics } from './metrics.js'

export const TERMINATED_WATCHERS = 'apiserver_terminated_watchers_total'
const HELP = '[ALPHA] Watches the watch cache ended because their client read too slowly, by group and resource.'

export interface GroupResourceName {
  group: string
  resource: string
}

/** Counts one terminated watch of `resource`. */
export function countTerminatedWatcher(metrics: Metrics, resource: GroupResourceName): void {
  metrics.addCounter(TERMINATED_WATCHERS, HELP, { group: resource.group, resource: resource.resource })
}
