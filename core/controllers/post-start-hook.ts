/**
 * Upstream's post-start hooks: start-up work whose health check,
 * `poststarthook/<name>` in /healthz, /livez and /readyz, fails until the
 * work has finished once. Work that fails (a write refused by admission, a
 * storage error) is logged and tried again, never fatal: the server keeps
 * serving and reports the hook as not finished until an attempt succeeds.
 */
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { Logger } from '../logging/logger.js'
import { type RetriedWork, type RetryDelays, retryUntilDone } from './bootstrap-retry.js'

export interface PostStartHook {
  /** `poststarthook/<name>`: failing until an attempt of the work has succeeded. */
  readonly check: HealthCheck
  /** Starts the work; settles after its first attempt, successful or not (later ones follow in the background). */
  run(): Promise<void>
  /**
   * The work's outcome is stored already (the store began from the state of
   * a start that did it): the check passes without the work running.
   */
  alreadyDone(): void
  /** No further attempts. */
  stop(): void
}

export function postStartHook(name: string, work: () => Promise<void>, logger: Logger, delays?: RetryDelays): PostStartHook {
  let running: RetriedWork | undefined
  return {
    check: {
      name: `poststarthook/${name}`,
      check: () => {
        if (!running?.done()) throw new Error('not finished')
      },
    },
    run() {
      running ??= retryUntilDone(`poststarthook/${name}`, work, logger, delays)
      return running.firstAttempt
    },
    alreadyDone() {
      running ??= { firstAttempt: Promise.resolve(), done: () => true, stop: () => {} }
    },
    stop() {
      running?.stop()
    },
  }
}
