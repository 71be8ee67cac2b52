/**
 * The authorizer chain for `--authorization-mode`: members of system:masters
 * first (as upstream puts them in every chain), then each mode in order. A
 * mode is added by writing its factory and naming it in MODE_FACTORIES; a
 * mode without one is refused at start-up, never mapped to something weaker.
 */
import { lifeCycleOf, type Part, type SecurityContext } from '../security/context.js'
import type { UserInfo } from '../resources/object.js'
import { alwaysAllow, alwaysDeny, type Authorizer, privilegedGroup, type SubjectRules, UnionAuthorizer, unionRulesFor } from './authorizer.js'
import { rbacAuthorizer } from './rbac/rbac-authorizer.js'
import { RbacRuleResolver } from './rbac/rule-resolver.js'

type ModeFactory = (ctx: SecurityContext) => Part<Authorizer>

const MODE_FACTORIES: Readonly<Record<string, ModeFactory>> = {
  AlwaysAllow: () => ({ value: alwaysAllow }),
  AlwaysDeny: () => ({ value: alwaysDeny }),
  RBAC: (ctx) => ({ value: rbacAuthorizer(new RbacRuleResolver(ctx.rbac.index)), ready: ctx.rbac.start() }),
}

export interface Authorization {
  readonly authorizer: Authorizer
  /** What the modes can list of a user's permissions (SelfSubjectRulesReview); system:masters is not a mode and lists nothing. */
  rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules>
  readonly ready: Promise<void>
  stop(): void
}

/** Throws, naming the mode, for a mode this server does not implement. */
export function buildAuthorization(modes: readonly string[], ctx: SecurityContext): Authorization {
  const parts = modes.map((mode) => {
    const factory = MODE_FACTORIES[mode]
    if (!factory) throw new Error(`authorization mode ${JSON.stringify(mode)} is not implemented yet; refusing to serve without it`)
    return factory(ctx)
  })
  const modeAuthorizers = parts.map((p) => p.value)
  const authorizer = new UnionAuthorizer([privilegedGroup, ...modeAuthorizers])
  return { authorizer, rulesFor: (user, namespace) => unionRulesFor(modeAuthorizers, user, namespace), ...lifeCycleOf(parts) }
}
