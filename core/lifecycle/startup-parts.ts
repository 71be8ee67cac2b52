/**
 * The server's start-up work in named parts, each behind the health check
 * upstream names that work by (`informer-sync`, `poststarthook/<hook>`,
 * `autoregister-completion`): failing while the part runs, and for good
 * once it failed. The first part that failed is what an embedded server
 * names when it refuses requests, since it serves none without its
 * controls (upstream's process would have exited).
 */
import { serviceUnavailable, type StatusError } from '../machinery/status-error.js'
import type { HealthCheck } from './health-check.js'

// Upstream's names for the checks of start-up work.
export const INFORMER_SYNC = 'informer-sync'
export const CRD_INFORMER_SYNCED = 'poststarthook/crd-informer-synced'
export const FLOW_CONTROL_CONSUMER = 'poststarthook/priority-and-fairness-config-consumer'
export const BOOTSTRAP_CONTROLLER = 'poststarthook/bootstrap-controller'
export const AUTOREGISTER_COMPLETION = 'autoregister-completion'

/** /healthz, /livez, /readyz and their per-check paths: they answer whatever state start-up is in. */
export function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/|$)/.test(path)
}

/** What every other request is answered once start-up failed: 503, naming the failed check (its reason stays in the log). */
export function startupFailed(check: string): StatusError {
  return serviceUnavailable(`the server failed to start (the ${check} check failed) and serves no requests`)
}

interface PartState {
  running: number
  error?: string
}

export class StartupParts {
  private readonly states = new Map<string, PartState>()
  /** The check of the first part that failed, once one has. */
  firstFailure: string | undefined

  /** Runs `work` as part of the start-up work named `name` (several may share one name). */
  async part<T>(name: string, work: Promise<T> | undefined): Promise<T | undefined> {
    const state = this.states.get(name) ?? { running: 0 }
    this.states.set(name, state)
    state.running += 1
    try {
      return await work
    } catch (err) {
      state.error ??= err instanceof Error ? err.message : String(err)
      this.firstFailure ??= name
      throw err
    } finally {
      state.running -= 1
    }
  }

  /** The health check of the work named `name`: failing until all of it has finished, and after any of it failed. */
  check(name: string): HealthCheck {
    return {
      name,
      check: () => {
        const state = this.states.get(name)
        if (state?.error !== undefined) throw new Error(`start-up failed: ${state.error}`)
        if (!state || state.running > 0) throw new Error('not finished')
      },
    }
  }
}
