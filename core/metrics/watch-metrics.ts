/**
 * Watches as upstream counts them: `apiserver_watch_events_total` and
 * `apiserver_watch_events_sizes`, by the group, version and kind watched
 * (kube-apiserver 1.32's labels). `apiserver_registered_watchers` (open
 * now) is kept but hidden, as upstream deprecated it in 1.23 (filters.ts);
 * `apiserver_longrunning_requests` counts open watches.
 */
import { REGISTERED_WATCHERS, WATCH_EVENT_SIZES, WATCH_EVENTS } from './definitions.js'
import type { Metrics } from './metrics.js'

export interface WatchedKind {
  group: string
  version: string
  kind: string
}

export interface WatchMetrics {
  /** One watch opened; `closed` once when it ends, `event` for each event sent. */
  opened(kind: WatchedKind): { event(bytes: number): void; closed(): void }
}

export function watchMetrics(metrics: Metrics): WatchMetrics {
  return {
    opened(kind) {
      const labels = { group: kind.group, version: kind.version, kind: kind.kind }
      const open = metrics.gaugeOf(REGISTERED_WATCHERS, labels)
      const events = metrics.counter(WATCH_EVENTS.name, WATCH_EVENTS.help, labels)
      // Found once per watch: an event to a thousand watchers observes it a thousand times.
      const sizes = metrics.histogramOf(WATCH_EVENT_SIZES, labels)
      open.add(1)
      let closed = false
      return {
        event: (bytes) => {
          events.add()
          sizes.observe(bytes)
        },
        closed: () => {
          if (closed) return
          closed = true
          open.add(-1)
        },
      }
    },
  }
}
