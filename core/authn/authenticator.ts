/**
 * Authentication as upstream's union of request authenticators: the first
 * one that recognises the request decides. A credential that is presented
 * but wrong is a 401, never a fall-back to anonymous.
 */
import type { ConnectionInfo } from '../ports.js'
import type { UserInfo } from '../machinery/object.js'

/** undefined: this authenticator found no credential of its kind. */
export type AuthResult = { user: UserInfo } | { error: string } | undefined

/**
 * What authenticators note of a request beside their answer, as upstream's
 * add to the request's context: annotations for its audit event, texts for
 * the answer's Warning headers. Kept whether the credential is taken or
 * refused (a token refused as invalidated is annotated too).
 */
export interface AuthNotes {
  readonly annotations: Record<string, string>
  readonly warnings: string[]
}

export const newAuthNotes = (): AuthNotes => ({ annotations: {}, warnings: [] })

export interface Authenticator {
  authenticate(request: Request, connection: ConnectionInfo, notes?: AuthNotes): AuthResult | Promise<AuthResult>
}

export const AUTHENTICATED_GROUP = 'system:authenticated'
export const ANONYMOUS_USER = 'system:anonymous'
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated'

/** Every authenticated user belongs to system:authenticated, as upstream's group adder ensures. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.username === ANONYMOUS_USER) return user
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] }
}

/**
 * Why a request is refused with 401. `noCredential`: no authenticator found
 * a credential of its kind (upstream's "not ok" without an error, which its
 * metrics count as a `failure` rather than an `error`).
 */
export interface AuthRefusal {
  error: string
  noCredential?: boolean
}

/** Who sent a request, as the authentication filter asks it (upstream's authenticator.Request). */
export interface RequestAuthenticator {
  /** The user, or the reason the request is refused with 401; `notes` gathers what the authenticators note. */
  authenticate(request: Request, connection: ConnectionInfo, notes?: AuthNotes): Promise<{ user: UserInfo } | AuthRefusal>
}

/**
 * `anonymous` answers only when no authenticator found a credential (upstream's
 * fail-on-error union): it may decline too (a path outside its conditions).
 */
export class UnionAuthenticator implements RequestAuthenticator {
  constructor(
    private readonly authenticators: readonly Authenticator[],
    private readonly anonymous?: Authenticator,
  ) {}

  async authenticate(request: Request, connection: ConnectionInfo, notes?: AuthNotes): Promise<{ user: UserInfo } | AuthRefusal> {
    const errors: string[] = []
    for (const a of this.authenticators) {
      const result = await a.authenticate(request, connection, notes)
      if (!result) continue
      if ('user' in result) return { user: withAuthenticatedGroup(result.user) }
      errors.push(result.error)
    }
    if (errors.length) return { error: errors.join(', ') }
    const anonymous = await this.anonymous?.authenticate(request, connection)
    if (anonymous && 'user' in anonymous) return anonymous
    return { error: 'no credentials provided', noCredential: true }
  }
}
