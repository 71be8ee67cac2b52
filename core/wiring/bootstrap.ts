/**
 * The start-up work of kube-apiserver's own post-start hooks, each under
 * the readiness check upstream names it by: the system namespaces, the
 * identity lease, the bootstrap priority classes, flow schemas and RBAC
 * policy, the extension-apiserver-authentication ConfigMap, the
 * `kubernetes` Service, the first pass of the run-once controllers, the
 * legacy token tracking ConfigMap.
 */
import { publishAuthenticationTrust, type ClientCABundleUpdate, withClientCAs } from '../controllers/authentication-trust.js'
import { retryUntilDone } from '../controllers/bootstrap-retry.js'
import { startLegacyTokenTracking } from '../controllers/legacy-token-tracking.js'
import type { ClusterServices } from '../controllers/cluster-services.js'
import { ensureSystemNamespaces } from '../controllers/namespace-lifecycle.js'
import { rbacBootstrapHook } from '../controllers/rbac-bootstrap-roles.js'
import type { ServerMembership } from '../controllers/server-membership.js'
import { systemPriorityClassesHook } from '../controllers/system-priority-classes.js'
import { flowControlBootstrapHook } from '../flowcontrol/bootstrap.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import { AUTHENTICATION_INFO, BOOTSTRAP_CONTROLLER, IDENTITY_LEASE_COLLECTOR, IDENTITY_LEASES, LEGACY_TOKEN_TRACKING, SYSTEM_NAMESPACES } from '../lifecycle/startup-parts.js'
import type { Logger } from '../logging/logger.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { Registry } from '../registry/registry.js'
import { storedObjects } from '../registry/stored-objects.js'

export interface BootstrapWiring {
  readonly options: ApiServerOptions
  readonly registry: Registry
  readonly membership: ServerMembership
  readonly services: ClusterServices
  readonly now: () => Date
  readonly logger: Logger
  readonly hooks: ServerHooks
  /** Whether priority and fairness is on: its bootstrap configuration is written only then. */
  readonly priorityAndFairness: boolean
  /**
   * The store began from the state a start with the same settings left (a
   * start-up template): the fixed objects the post-start hooks write are
   * stored as those hooks leave them.
   */
  readonly startupGiven: boolean
}

/** Publishes the client CA bundles again when they rotate: the server's `updateClientCAs`. */
export type PublishClientCAs = (bundles: ClientCABundleUpdate) => Promise<void>

export interface Bootstrap {
  readonly publishClientCAs: PublishClientCAs
  /**
   * Whether every post-start hook that writes fixed objects has finished:
   * only then does the store hold what a start-up template may stand for
   * (a first attempt refused by admission or by the storage leaves it
   * short, and a start from such a template would skip the hooks).
   */
  fixedObjectsWritten(): boolean
}

export function registerBootstrap(wiring: BootstrapWiring): Bootstrap {
  const { options, registry, membership, services, now, logger, hooks, priorityAndFairness, startupGiven } = wiring
  // Upstream's system namespaces controller: a refused creation is logged and tried again, and readiness does not wait for it.
  const namespaceBootstrap = (options.bootstrapNamespaces ?? true) ? retryUntilDone('system namespaces', () => ensureSystemNamespaces(registry, now), logger) : undefined
  const systemNamespaces = namespaceBootstrap?.firstAttempt ?? Promise.resolve()
  if (namespaceBootstrap) hooks.onShutdown(() => namespaceBootstrap.stop())
  hooks.onStart('load', SYSTEM_NAMESPACES, () => systemNamespaces)
  // The leases live in kube-system; a lone server's first attempt takes the controllers' lease at once. The same
  // start begins collecting the expired identity leases of servers that are gone.
  hooks.onStart('load', IDENTITY_LEASES, () => systemNamespaces.then(() => membership.start()))
  hooks.alias(IDENTITY_LEASE_COLLECTOR, IDENTITY_LEASES)

  // The policy costs every start ~120 writes, so an embedder gets it by default only where it decides anything.
  const rbacAuthorizes = (options.authorizationConfiguration?.map((s) => s.type) ?? options.authorizationModes ?? []).includes('RBAC')
  // Upstream writes these through its loopback client. Here they write to the stores directly (the stored objects
  // the registry answers for): through the client, 120 ClusterRole creates took 0.5-1 s, several times the whole
  // start-up of a server with the policy (~160 ms median), and test harnesses start servers constantly.
  const postStartHooks = [
    (options.bootstrapPriorityClasses ?? true) ? systemPriorityClassesHook(registry, now, logger) : undefined,
    priorityAndFairness && (options.bootstrapFlowControl ?? true) ? flowControlBootstrapHook(registry.catalogue, storedObjects(registry), now, logger) : undefined,
    (options.bootstrapRbacPolicy ?? rbacAuthorizes) ? rbacBootstrapHook(registry, now, logger) : undefined,
  ]
  for (const hook of postStartHooks) {
    if (!hook) continue
    // The hook answers its own check (`poststarthook/<name>`); its work is retried, never failing start-up.
    hooks.addCheck(hook.check)
    // From a template, reading back every object to find nothing to write cost a start more than the rest of its
    // hooks together: the RBAC policy alone is ~120 objects compared rule by rule.
    if (startupGiven) hook.alreadyDone()
    else hooks.onStart('load', undefined, () => hook.run())
    hooks.onShutdown(() => hook.stop())
  }

  // What the extension-apiserver-authentication ConfigMap publishes: the options, with CA bundles rotated since.
  const trust = { options: options.authentication ?? {}, published: Promise.resolve() }
  // Extension servers read whom to trust from kube-system, which exists by now; a failure is logged, not fatal.
  hooks.onStart('bootstrap', AUTHENTICATION_INFO, () =>
    publishAuthenticationTrust(registry, trust.options, now).catch((err: unknown) =>
      logger.warn({ err: String(err) }, 'cannot publish the extension-apiserver-authentication ConfigMap'),
    ),
  )
  // Upstream runs it in every kube-apiserver; once per store is enough here, the ConfigMap being one per cluster.
  // Where it runs, start-up ends with the ConfigMap in place, also from a start-up template (whose stored form leaves
  // it out, so that a new cluster's `since` is its own); elsewhere the check passes at once, as upstream's does once
  // its controller is started.
  let legacyTokenTracking: Promise<void> | undefined
  membership.runOnce('legacy-token-tracking', () => {
    let tracking: ReturnType<typeof startLegacyTokenTracking> | undefined
    let stopped = false
    // kube-system exists once the load phase is through.
    legacyTokenTracking = hooks.after('load').then(() => {
      if (stopped) return undefined
      tracking = startLegacyTokenTracking({ stores: registry, now, logger })
      return tracking.firstSync
    })
    return () => {
      stopped = true
      tracking?.stop()
    }
  })
  hooks.onStart('controllers', LEGACY_TOKEN_TRACKING, () => legacyTokenTracking)
  hooks.onStart('bootstrap', BOOTSTRAP_CONTROLLER, () => services.start(registry, now, logger, membership))
  hooks.onShutdown(() => services.stop())
  // A lone server's controllers (default service accounts, storage protection ...) have done their first pass.
  hooks.onStart('controllers', BOOTSTRAP_CONTROLLER, () => membership.controllersStarted())
  hooks.onShutdown(() => membership.stop())

  const fixedObjectHooks = postStartHooks.filter((hook) => hook !== undefined)
  return {
    publishClientCAs(bundles) {
      trust.options = withClientCAs(trust.options, bundles)
      const current = trust.options
      // In order: two quick rotations end with the last bundles published.
      trust.published = trust.published.catch(() => {}).then(() => publishAuthenticationTrust(registry, current, now))
      return trust.published
    },
    fixedObjectsWritten: () => fixedObjectHooks.every((hook) => passes(hook.check)),
  }
}

/** Whether a post-start hook's check passes now (theirs answer at once: a promise counts as not yet). */
function passes(check: HealthCheck): boolean {
  try {
    return check.check() === undefined
  } catch {
    return false
  }
}
