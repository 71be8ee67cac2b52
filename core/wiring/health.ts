/**
 * The checks behind /healthz, /livez and /readyz, in upstream's order:
 * ping, log, etcd, the KMS plugins', then the boot sequence (the post-start
 * hooks and autoregister-completion) in the order upstream registers its
 * hooks. /readyz adds etcd-readiness (the store within
 * --kvstore-readycheck-timeout), informer-sync and `shutdown`; /livez gives
 * the boot sequence --livez-grace-period.
 */
import { graceForStartup } from '../api/health.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import type { ServerLifecycle } from '../lifecycle/lifecycle.js'
import { inUpstreamOrder, isBootSequenceCheck } from '../lifecycle/startup-parts.js'

export interface HealthWiring {
  readonly hooks: ServerHooks
  readonly lifecycle: ServerLifecycle
  /** The storage's own checks (`etcd` on all three endpoints, `etcd-readiness` on /readyz). */
  readonly storage: { healthz(): Promise<void>; readyz(): Promise<void> }
  /** Checks added to all three endpoints (the KMS plugins'). */
  readonly extra: readonly HealthCheck[]
  /** `--livez-grace-period`: start-up work still under way does not make the server look dead for this long. */
  readonly livezGracePeriodMs: number
  /** How long the server has been up. */
  readonly uptimeMs: () => number
}

export function healthChecks({ hooks, lifecycle, storage, extra, livezGracePeriodMs, uptimeMs }: HealthWiring): { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] } {
  const base: HealthCheck[] = [
    { name: 'ping', check: () => {} },
    { name: 'log', check: () => {} },
    { name: 'etcd', check: () => storage.healthz() },
  ]
  const startup = [...hooks.startupChecks(), ...hooks.ownChecks()]
  const bootSequence = inUpstreamOrder(startup.filter((c) => isBootSequenceCheck(c.name)))
  const readinessOnly = startup.filter((c) => !isBootSequenceCheck(c.name))
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (lifecycle.shutdownInitiated) throw new Error('process is shutting down')
    },
  }
  return {
    healthz: [...base, ...extra, ...bootSequence],
    livez: [...base, ...extra, ...bootSequence.map((c) => graceForStartup(c, livezGracePeriodMs, uptimeMs))],
    readyz: [...base, { name: 'etcd-readiness', check: () => storage.readyz() }, ...extra, ...readinessOnly, ...bootSequence, shutdown],
  }
}
