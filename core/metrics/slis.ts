/**
 * The health check SLIs (`/metrics/slis`): each run of a check by the root
 * of `/healthz`, `/livez` or `/readyz` sets `kubernetes_healthcheck` to 1
 * or 0 and counts one in `kubernetes_healthchecks_total`, as upstream's
 * component-base records them.
 */
import { HEALTHCHECK, HEALTHCHECKS_TOTAL } from './definitions.js'
import type { Metrics } from './metrics.js'

/** One run of `check` by `endpoint` (healthz, livez or readyz), passed or not. */
export function observeHealthcheck(slis: Metrics, check: string, endpoint: string, passed: boolean): void {
  slis.setGauge(HEALTHCHECK.name, HEALTHCHECK.help, { name: check, type: endpoint }, passed ? 1 : 0)
  slis.inc(HEALTHCHECKS_TOTAL, { name: check, type: endpoint, status: passed ? 'success' : 'error' })
}
