/**
 * The `--oidc-*` flags as the one JWT authenticator they stand for, the way
 * upstream turns them into an AuthenticationConfiguration entry, with the
 * legacy prefix rules of the spec (ClaimMappings, "relation to the legacy
 * flags"): no `--oidc-username-prefix` prefixes names from claims other
 * than `email` with `<issuer>#`, and `-` means no prefix.
 */
import { errorText, FieldPath } from '../machinery/field.js'
import { checkJWTAuthenticator } from './authentication-jwt.js'
import type { JWTAuthenticator, LoadedJWTAuthenticator } from './authentication.js'

export interface OidcFlags {
  issuerUrl: string
  clientId: string
  /** The content of `--oidc-ca-file`. */
  certificateAuthority?: string
  usernameClaim: string
  usernamePrefix: string
  groupsClaim: string
  groupsPrefix: string
  requiredClaims: Record<string, string>
}

function usernamePrefix(flags: OidcFlags): string {
  if (flags.usernamePrefix === '-') return ''
  if (flags.usernamePrefix === '' && flags.usernameClaim !== 'email') return `${flags.issuerUrl}#`
  return flags.usernamePrefix
}

/** The authenticator; throws with every problem when the flags do not make a valid one. */
export function jwtAuthenticatorFromOidcFlags(flags: OidcFlags): LoadedJWTAuthenticator {
  const authenticator: JWTAuthenticator = {
    issuer: {
      url: flags.issuerUrl,
      discoveryURL: undefined,
      certificateAuthority: flags.certificateAuthority ?? '',
      audiences: [flags.clientId],
      audienceMatchPolicy: '',
      egressSelectorType: '',
    },
    claimValidationRules: Object.entries(flags.requiredClaims)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([claim, requiredValue]) => ({ claim, requiredValue, expression: '', message: '' })),
    claimMappings: {
      username: { claim: flags.usernameClaim, prefix: usernamePrefix(flags), expression: '' },
      groups: flags.groupsClaim
        ? { claim: flags.groupsClaim, prefix: flags.groupsPrefix, expression: '' }
        : { claim: '', prefix: undefined, expression: '' },
      uid: { claim: '', expression: '' },
      extra: [],
    },
    userValidationRules: [],
  }
  const { errors, programs } = checkJWTAuthenticator(authenticator, FieldPath.root('oidc'), new Set())
  if (errors.length) throw new Error(errors.map(errorText).join('; '))
  return { ...authenticator, programs }
}
