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
export const ADMISSION_INITIALIZER = 'poststarthook/start-apiserver-admission-initializer'
export const START_INFORMERS = 'poststarthook/generic-apiserver-start-informers'
export const FLOW_CONTROL_FILTER = 'poststarthook/priority-and-fairness-filter'
export const APIEXTENSIONS_INFORMERS = 'poststarthook/start-apiextensions-informers'
export const APIEXTENSIONS_CONTROLLERS = 'poststarthook/start-apiextensions-controllers'
export const SYSTEM_NAMESPACES = 'poststarthook/start-system-namespaces-controller'
export const AUTHENTICATION_INFO = 'poststarthook/start-cluster-authentication-info-controller'
export const IDENTITY_LEASES = 'poststarthook/start-kube-apiserver-identity-lease-controller'
export const IDENTITY_LEASE_COLLECTOR = 'poststarthook/start-kube-apiserver-identity-lease-garbage-collector'
export const LEGACY_TOKEN_TRACKING = 'poststarthook/start-legacy-token-tracking-controller'
/** The aggregator's hooks, which all stand for the one start of its APIService controllers here. */
export const AGGREGATOR_HOOKS = [
  'poststarthook/start-kube-aggregator-informers',
  'poststarthook/apiservice-status-local-available-controller',
  'poststarthook/apiservice-status-remote-available-controller',
  'poststarthook/apiservice-registration-controller',
  'poststarthook/apiservice-discovery-controller',
  'poststarthook/kube-apiserver-autoregistration',
  'poststarthook/apiservice-openapi-controller',
  'poststarthook/apiservice-openapiv3-controller',
] as const

/**
 * The order kube-apiserver (1.32) registers its post-start hooks in, which
 * is the order its health endpoints list their checks. The hooks of work this
 * server does not do (the service IP repair, the proxy certificate's
 * reload ...) are not among its checks.
 */
const UPSTREAM_HOOK_ORDER: readonly string[] = [
  ADMISSION_INITIALIZER,
  START_INFORMERS,
  FLOW_CONTROL_CONSUMER,
  FLOW_CONTROL_FILTER,
  APIEXTENSIONS_INFORMERS,
  APIEXTENSIONS_CONTROLLERS,
  CRD_INFORMER_SYNCED,
  SYSTEM_NAMESPACES,
  AUTHENTICATION_INFO,
  IDENTITY_LEASES,
  IDENTITY_LEASE_COLLECTOR,
  LEGACY_TOKEN_TRACKING,
  'poststarthook/rbac/bootstrap-roles',
  'poststarthook/scheduling/bootstrap-system-priority-classes',
  'poststarthook/priority-and-fairness-config-producer',
  BOOTSTRAP_CONTROLLER,
  ...AGGREGATOR_HOOKS.slice(0, 6),
  AUTOREGISTER_COMPLETION,
  ...AGGREGATOR_HOOKS.slice(6),
]

/**
 * Whether `check` is one of the boot sequence's (a post-start hook's, or
 * the aggregator's autoregister-completion): listed on /healthz and /livez
 * as well as /readyz, as upstream lists them. Other start-up checks
 * (informer-sync) are readiness checks alone.
 */
export function isBootSequenceCheck(check: string): boolean {
  return check.startsWith('poststarthook/') || check === AUTOREGISTER_COMPLETION
}

/** `checks` in upstream's order of its hooks; those it does not name keep their order, after the rest. */
export function inUpstreamOrder<T extends { name: string }>(checks: readonly T[]): T[] {
  const rank = (c: T) => {
    const i = UPSTREAM_HOOK_ORDER.indexOf(c.name)
    return i < 0 ? UPSTREAM_HOOK_ORDER.length : i
  }
  // Array.prototype.sort is stable: unnamed checks keep their registration order.
  return [...checks].sort((a, b) => rank(a) - rank(b))
}

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
