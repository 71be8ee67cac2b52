/**
 * Authentication, authorization and admission as createApiServer wires
 * them. They read objects the registry serves (RBAC objects, service
 * accounts, quotas), and the registry asks them back (the review resources,
 * role escalation checks, admission on every write): the registry is built
 * over the `LateSecurity` answers first, and the chains, built once the
 * registry and the informers exist, are bound into it.
 */
import { type AdmissionChain, concatChains, lateBoundChain } from '../admission/chain.js'
import { type BuiltAdmission, buildAdmission, defaultAdmissionPlugins } from '../admission/plugins.js'
import type { QuotaStorage } from '../admission/quota/plugin.js'
import { withAuthenticatedGroup } from '../authn/authenticator.js'
import { type Authentication, buildAuthentication } from '../authn/chain.js'
import type { Authorizer } from '../authz/authorizer.js'
import { type Authorization, type AuthorizationContext, buildAuthorization } from '../authz/modes.js'
import type { WriteAuthorization } from '../authz/rbac/escalation.js'
import { LiveRbacIndex } from '../authz/rbac/live-rbac-index.js'
import { RbacRuleResolver } from '../authz/rbac/rule-resolver.js'
import { startResourceQuotaController } from '../controllers/resource-quota.js'
import type { RunOnce } from '../controllers/run-once.js'
import type { ServerHooks } from '../lifecycle/hooks.js'
import { ADMISSION_INITIALIZER, INFORMER_SYNC } from '../lifecycle/startup-parts.js'
import type { BuiltinOptions } from '../resources/builtin.js'
import { measuredChain } from '../admission/measured-admission.js'
import type { Logger } from '../logging/logger.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { Metrics } from '../metrics/metrics.js'
import { countTerminatedWatcher } from '../metrics/terminated-watchers.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { Registry } from '../registry/registry.js'
import type { StorePolicy } from '../registry/store.js'
import type { SecurityContext } from '../security/context.js'
import { resourceQuotas } from '../resources/core/quotas.js'
import { StorageError } from '../storage/interface.js'
import type { ObserveStoredObjects } from '../storage/server-storage.js'
import { DEFAULT_WATCHER_BUFFER_SIZE } from '../storage/watch-cache.js'

interface Chains {
  readonly authentication: Authentication
  readonly authorization: Authorization
  readonly admission: BuiltAdmission
  readonly rbac: LiveRbacIndex
}

/** What the catalogue and the registry ask of the chains before they exist; each answer asks the chains bound since. */
export class LateSecurity {
  private chains: Chains | undefined
  private registryWordedRules: RbacRuleResolver | undefined

  readonly authorizer: Authorizer = { authorize: (attrs) => this.bound().authorization.authorizer.authorize(attrs) }

  /** TokenReview and SelfSubjectRulesReview. */
  readonly reviews: Required<BuiltinOptions> = {
    rulesFor: (user, namespace) => this.bound().authorization.rulesFor(user, namespace),
    // TokenReview asks for its own audiences, else the API's, as a request's token is asked.
    authenticateToken: async (token, audiences, notes) => {
      const { authentication } = this.bound()
      const apiAudiences = authentication.apiAudiences.length ? authentication.apiAudiences : undefined
      const result = await authentication.tokens.authenticateToken(token, audiences ?? apiAudiences, notes)
      if (!result) return {}
      if (!('user' in result)) return { error: result.error }
      return { user: withAuthenticatedGroup(result.user), ...(result.audiences ? { audiences: result.audiences } : {}) }
    },
  }

  /** Writes of roles and bindings ask the whole chain (`escalate`, `bind`) and the RBAC rules of the writer. */
  readonly writeAuthorization: WriteAuthorization = {
    authorizer: this.authorizer,
    rbacRules: async () => {
      const { rbac } = this.bound()
      await rbac.start()
      this.registryWordedRules ??= new RbacRuleResolver(rbac.index, 'registry')
      return this.registryWordedRules
    },
  }

  /** The enabled admission plugins, as the registry runs them. */
  readonly admission: AdmissionChain = lateBoundChain(() => this.bound().admission.chain)

  bind(chains: Chains): void {
    this.chains = chains
  }

  private bound(): Chains {
    if (!this.chains) throw new Error('the security chains were asked before they were built')
    return this.chains
  }
}

export interface SecurityWiring extends SecurityContext {
  /** The registry, for what admission holds in storage itself (ResourceQuota's charges and controller). */
  readonly registry: Registry
  readonly runOnce: RunOnce
  /** Tells of every stored object (controllers started on demand). */
  readonly observeStoredObjects: ObserveStoredObjects
  /** Where clients reach the server, for issuer discovery. */
  readonly externalAddress: () => string
  readonly hooks: ServerHooks
}

/** Builds the three chains, binds them into `late`, and registers their readiness (informer-sync) and stops. */
export function assembleSecurity(late: LateSecurity, wiring: SecurityWiring): Chains {
  const { options, hooks } = wiring
  const rbac = new LiveRbacIndex(wiring.informers)
  const context: AuthorizationContext = { ...wiring, rbac }
  const authorization = buildAuthorization(options.authorizationConfiguration ?? options.authorizationModes ?? ['AlwaysAllow'], context)
  const authentication = buildAuthentication(context, wiring.externalAddress)
  const admission = buildAdmission(
    options.admission?.plugins ?? defaultAdmissionPlugins(),
    { ...context, authorizer: late.authorizer, runOnce: wiring.runOnce, observeStoredObjects: wiring.observeStoredObjects, quotaStorage: quotaStorage(wiring.registry, wiring.now, wiring.logger) },
    options.admission?.configurations,
  )
  const chains = { authentication, authorization, admission, rbac }
  late.bind(chains)
  // An authenticator, authorizer or plugin that reads objects answers once it has them.
  hooks.manage(INFORMER_SYNC, authentication)
  hooks.manage(INFORMER_SYNC, authorization)
  hooks.manage(INFORMER_SYNC, admission)
  // Upstream's admission initializer hook: the plugins have what they read (webhook and policy configurations, quotas ...).
  hooks.onStart('load', ADMISSION_INITIALIZER, () => admission.ready)
  hooks.onShutdown(() => rbac.stop())
  return chains
}

/**
 * What the registry's stores consult on every write: the admission chain
 * (the enabled plugins, then the embedder's), the authorization of role and
 * binding writes, and the server-wide settings the strategies read.
 */
export function registryPolicy(options: ApiServerOptions, late: LateSecurity, embedderAdmission: AdmissionChain | undefined, metrics: Metrics): StorePolicy {
  return {
    allowPrivileged: options.allowPrivileged ?? false,
    ...(options.multiServer?.coordinatedLeaderElection ? { coordinatedLeaderElection: true } : {}),
    deleteCollectionWorkers: options.deleteCollectionWorkers ?? 1,
    admission: measuredChain(embedderAdmission ? concatChains(late.admission, embedderAdmission) : late.admission, metrics),
    authorization: late.writeAuthorization,
    // Watches the cache does not serve (it is off, or the resourceVersion is older than its window) are bounded alike.
    watcherBufferSize: options.watcherBufferSize ?? DEFAULT_WATCHER_BUFFER_SIZE,
    onWatcherTerminated: (resource) => countTerminatedWatcher(metrics, resource),
  }
}

/** ResourceQuota's charges written to the quotas' storage in place, and its controller over the registry. */
function quotaStorage(registry: Registry, now: () => Date, logger: Logger): QuotaStorage {
  const store = () => registry.store(resourceQuotas)
  return {
    async updateQuota(namespace, name, change) {
      try {
        return await store().storage.guaranteedUpdate(store().key(namespace, name), change)
      } catch (err) {
        // Deleted since it was read: nothing to charge.
        if ((err instanceof StorageError && err.code === 'KeyNotFound') || hasStatusCode(err, 404)) return undefined
        throw err
      }
    },
    startController: (quotas) => startResourceQuotaController(registry, quotas, now, logger),
  }
}
