/**
 * The authorizer chain: members of system:masters first (as upstream puts
 * them in every chain), then each configured authorizer in order. The chain
 * is given either as `--authorization-mode` names or as the authorizers of
 * an AuthorizationConfiguration (authorizer-specs.ts turns both into one
 * list). A mode is added by writing its factory and naming it in
 * MODE_FACTORIES; a mode without one is refused at start-up, never mapped
 * to something weaker.
 */
import { lifeCycleOf, type Part, type SecurityContext } from '../security/context.js'
import type { LiveRbacIndex } from './rbac/live-rbac-index.js'
import { decisionCountingAuthorizer } from './measured-authorizer.js'
import type { UserInfo } from '../machinery/object.js'
import { abacAuthorizer } from './abac.js'
import { type AuthorizerSpec, legacyAuthorizerSpecs } from './authorizer-specs.js'
import { alwaysAllow, alwaysDeny, type Authorizer, privilegedGroup, type SubjectRules, UnionAuthorizer, unionRulesFor } from './authorizer.js'
import { nodeMode } from './node.js'
import { rbacAuthorizer } from './rbac/rbac-authorizer.js'
import { RbacRuleResolver } from './rbac/rule-resolver.js'
import { webhookAuthorizer } from './webhook.js'

/**
 * What the authorizers are built from: the security context, and the roles
 * and bindings in memory, shared by the RBAC authorizer and the escalation
 * checks of role and binding writes (it starts watching on first use and
 * is stopped by the server).
 */
export interface AuthorizationContext extends SecurityContext {
  readonly rbac: LiveRbacIndex
}

type ModeFactory = (ctx: AuthorizationContext, spec: AuthorizerSpec) => Part<Authorizer>

const MODE_FACTORIES: Readonly<Record<string, ModeFactory>> = {
  AlwaysAllow: () => ({ value: alwaysAllow }),
  AlwaysDeny: () => ({ value: alwaysDeny }),
  ABAC: (ctx) => {
    const policy = ctx.options.authorizationPolicy
    if (!policy) throw new Error('authorization mode "ABAC" needs the rules of --authorization-policy-file (authorizationPolicy)')
    return { value: abacAuthorizer(policy) }
  },
  Node: (ctx) => nodeMode(ctx),
  Webhook: (ctx, spec) => {
    if (!spec.webhook) throw new Error('authorization mode "Webhook" needs its connection (authorizationWebhook or an AuthorizationConfiguration)')
    return { value: webhookAuthorizer(spec.webhook, ctx.webhookClient, ctx.logger, ctx.now) }
  },
  RBAC: (ctx) => ({ value: rbacAuthorizer(new RbacRuleResolver(ctx.rbac.index)), ready: ctx.rbac.start() }),
}

export interface Authorization {
  /** Asks the chain in effect now; a reload swaps the chain between two requests. */
  readonly authorizer: Authorizer
  /** What the modes can list of a user's permissions (SelfSubjectRulesReview); system:masters is not a mode and lists nothing. */
  rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules>
  readonly ready: Promise<void>
  /**
   * Builds a chain from `specs`, waits until it can answer, then puts it in
   * place of the current one and stops the old one. Rejects, and leaves the
   * current chain in place, when the new one cannot be built.
   */
  reload(specs: readonly AuthorizerSpec[]): Promise<void>
  stop(): void
}

interface BuiltChain {
  authorizer: Authorizer
  rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules>
  ready: Promise<void>
  stop(): void
}

/** Throws, naming the mode, for a mode this server does not implement. */
function buildChain(specs: readonly AuthorizerSpec[], ctx: AuthorizationContext): BuiltChain {
  const parts: Part<Authorizer>[] = []
  try {
    for (const spec of specs) {
      const factory = MODE_FACTORIES[spec.type]
      if (!factory) throw new Error(`authorization mode ${JSON.stringify(spec.type)} is not implemented yet; refusing to serve without it`)
      parts.push(factory(ctx, spec))
    }
  } catch (err) {
    for (const p of parts) p.stop?.()
    throw err
  }
  const metrics = ctx.metrics
  const modeAuthorizers = parts.map((p, i) => {
    const spec = specs[i]
    return metrics && spec ? decisionCountingAuthorizer(p.value, metrics, spec.type, spec.name) : p.value
  })
  return {
    authorizer: new UnionAuthorizer([privilegedGroup, ...modeAuthorizers]),
    rulesFor: (user, namespace) => unionRulesFor(modeAuthorizers, user, namespace),
    ...lifeCycleOf(parts),
  }
}

/** The chain of an AuthorizationConfiguration's authorizers, or of `--authorization-mode` names. */
export function buildAuthorization(modesOrSpecs: readonly string[] | readonly AuthorizerSpec[], ctx: AuthorizationContext): Authorization {
  const specs = modesOrSpecs.map((m) => (typeof m === 'string' ? legacyAuthorizerSpecs([m], ctx.options)[0]! : m))
  let current = buildChain(specs, ctx)
  let stopped = false
  return {
    authorizer: { authorize: (attrs) => current.authorizer.authorize(attrs) },
    rulesFor: (user, namespace) => current.rulesFor(user, namespace),
    ready: current.ready,
    async reload(next) {
      const built = buildChain(next, ctx)
      try {
        await built.ready
      } catch (err) {
        built.stop()
        throw err
      }
      if (stopped) return built.stop()
      const old = current
      current = built
      old.stop()
    },
    stop() {
      stopped = true
      current.stop()
    },
  }
}
