/** The daemon suite's section of docs/benchmarks.md. */
import type { LoadResult } from './load.js'
import type { WatchDelivery } from './daemon-watch.js'
import type { EtcdDirectFigures } from './etcd-direct.js'
import type { WrkResult } from './wrk.js'

export interface DaemonFigures {
  readyMs?: number
  rssReadyMiB?: number
  wrkGet?: WrkResult
  nodeGet?: LoadResult
  list?: LoadResult
  list0?: LoadResult
  creates?: LoadResult
  /** Creates made by the measurement (the bulk fill adds the rest). */
  created: number
  updates?: LoadResult
  watch100?: WatchDelivery
  watch1000?: WatchDelivery
  bulkObjects?: number
  rssBulkMiB?: number
}

export interface SuiteFigures {
  embedded: DaemonFigures
  etcd: DaemonFigures
  limit: DaemonFigures
  direct: EtcdDirectFigures
  wrkMissing: string | undefined
  seconds: number
  valueBytes: number
}

export const emptyFigures = (): DaemonFigures => ({ created: 0 })

export function renderDaemonSuite(f: SuiteFigures, runSeconds: number): string {
  return ['<!-- daemon-suite: begin -->', JSON.stringify(f, null, 1), String(runSeconds), '<!-- daemon-suite: end -->'].join('\n')
}
