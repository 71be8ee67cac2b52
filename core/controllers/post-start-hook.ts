/**
 * Upstream's post-start hooks: start-up work whose health check,
 * `poststarthook/<name>` in /healthz, /livez and /readyz, fails until the
 * work has finished once.
 */
import type { HealthCheck } from '../lifecycle/health-check.js'

export interface PostStartHook {
  /** `poststarthook/<name>`: failing until `run` has finished. */
  readonly check: HealthCheck
  run(): Promise<void>
}

export function postStartHook(name: string, work: () => Promise<void>): PostStartHook {
  let done = false
  return {
    check: {
      name: `poststarthook/${name}`,
      check: () => {
        if (!done) throw new Error('not finished')
      },
    },
    async run() {
      await work()
      done = true
    },
  }
}
