/**
 * The checks behind /healthz, /livez and /readyz, in upstream's order:
 * ping, log, etcd, the bootstrap controller and the post-start hooks that
 * answer their own checks; /readyz adds the checks of the start-up work
 * and `shutdown`; the KMS plugins' checks are on all three.
 */
import { graceForStartup } from '../api/health.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import type { ServerLifecycle } from '../lifecycle/lifecycle.js'
import { BOOTSTRAP_CONTROLLER } from '../lifecycle/startup-parts.js'

export interface HealthWiring {
  readonly hooks: ServerHooks
  readonly lifecycle: ServerLifecycle
  /** The storage's own checks (`/healthz/etcd`, `/readyz/etcd`). */
  readonly storage: { healthz(): Promise<void>; readyz(): Promise<void> }
  /** Checks added to all three endpoints (the KMS plugins'). */
  readonly extra: readonly HealthCheck[]
  /** `--livez-grace-period`: start-up work still under way does not make the server look dead for this long. */
  readonly livezGracePeriodMs: number
  /** How long the server has been up. */
  readonly uptimeMs: () => number
}

export function healthChecks({ hooks, lifecycle, storage, extra, livezGracePeriodMs, uptimeMs }: HealthWiring): { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] } {
  const base = (storageCheck: HealthCheck['check']): HealthCheck[] => [
    { name: 'ping', check: () => {} },
    { name: 'log', check: () => {} },
    { name: 'etcd', check: storageCheck },
    hooks.check(BOOTSTRAP_CONTROLLER),
    ...hooks.ownChecks(),
  ]
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (lifecycle.shutdownInitiated) throw new Error('process is shutting down')
    },
  }
  return {
    healthz: [...base(() => storage.healthz()), ...extra],
    livez: [...base(() => storage.healthz()), ...extra].map((c) => (c.name.startsWith('poststarthook/') ? graceForStartup(c, livezGracePeriodMs, uptimeMs) : c)),
    readyz: [...base(() => storage.readyz()), ...hooks.startupChecks([BOOTSTRAP_CONTROLLER]), ...extra, shutdown],
  }
}
