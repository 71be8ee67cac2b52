/**
 * The AuthenticationConfiguration file (`--authentication-config`; spec:
 * "AuthenticationConfiguration", "JWTAuthenticator" and below): JWT
 * authenticators and the anonymous authenticator, validated as upstream's
 * ValidateAuthenticationConfiguration does, with every CEL expression
 * compiled at load time.
 */
import { type FieldError, FieldPath, duplicate, errorText, forbiddenField, invalid, required, tooMany } from '../machinery/field.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig } from './decode.js'
import { type JWTPrograms, checkJWTAuthenticator } from './authentication-jwt.js'
import {
  type AnonymousAuthConfig,
  type AuthenticationConfiguration,
  type JWTAuthenticator,
  authenticationConfigurationSchema,
} from './authentication-schema.js'
import { appendAll } from '../machinery/append-all.js'

export type { CelRule, JWTPrograms } from './authentication-jwt.js'
export type { AnonymousAuthConfig, AuthenticationConfiguration, JWTAuthenticator } from './authentication-schema.js'

/** The loaded file: each authenticator carries its compiled expressions. */
export type LoadedAuthenticationConfiguration = Omit<AuthenticationConfiguration, 'jwt'> & {
  jwt: LoadedJWTAuthenticator[]
}

/** One JWT authenticator of the file (or of the `--oidc-*` flags) with its compiled expressions. */
export type LoadedJWTAuthenticator = JWTAuthenticator & { programs: JWTPrograms }

/** upstream allows this many JWT authenticators. */
const MAX_JWT_AUTHENTICATORS = 64

export interface AuthenticationLoadOptions {
  /**
   * Issuers no JWT authenticator may use: the service account issuers
   * (`--service-account-issuer`), so a file cannot take over their tokens.
   */
  disallowedIssuers?: readonly string[]
}

function checkAnonymous(anonymous: AnonymousAuthConfig): FieldError[] {
  const errs: FieldError[] = []
  const conditions = FieldPath.root('anonymous').child('conditions')
  if (!anonymous.enabled && anonymous.conditions.length > 0) {
    errs.push(invalid(conditions, anonymous.conditions, 'enabled should be set to true when conditions are defined'))
  }
  // A condition is a path for which anonymous requests are allowed; an empty or repeated one is a mistake.
  const seen = new Set<string>()
  anonymous.conditions.forEach((c, i) => {
    const p = conditions.index(i).child('path')
    if (!c.path) errs.push(required(p))
    else if (seen.has(c.path)) errs.push(duplicate(p, c.path))
    seen.add(c.path)
  })
  return errs
}

/** Every problem of the file, and the compiled expressions of each authenticator. */
function checkAuthentication(
  c: AuthenticationConfiguration,
  disallowedIssuers: ReadonlySet<string>,
): { errors: FieldError[]; programs: JWTPrograms[] } {
  const root = FieldPath.root('jwt')
  // Zero authenticators are fine: a file may configure only anonymous authentication.
  if (c.jwt.length > MAX_JWT_AUTHENTICATORS) {
    return { errors: [tooMany(root, c.jwt.length, MAX_JWT_AUTHENTICATORS)], programs: [] }
  }
  const errors: FieldError[] = []
  const programs: JWTPrograms[] = []
  const seenIssuers = new Set<string>()
  const seenDiscoveryURLs = new Set<string>()
  c.jwt.forEach((a, i) => {
    const path = root.index(i)
    const checked = checkJWTAuthenticator(a, path, disallowedIssuers)
    appendAll(errors, checked.errors)
    programs.push(checked.programs)
    if (seenIssuers.has(a.issuer.url)) errors.push(duplicate(path.child('issuer').child('url'), a.issuer.url))
    seenIssuers.add(a.issuer.url)
    const discovery = a.issuer.discoveryURL ?? ''
    if (discovery) {
      if (seenDiscoveryURLs.has(discovery)) errors.push(duplicate(path.child('issuer').child('discoveryURL'), discovery))
      seenDiscoveryURLs.add(discovery)
    }
  })
  if (c.anonymous) appendAll(errors, checkAnonymous(c.anonymous))
  return { errors, programs }
}

const API_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${CONFIG_GROUP}/${v}`)

/** The kind for decodeConfig; its rules compile every expression (use loadAuthenticationConfiguration to keep the programs). */
export const AuthenticationConfigurationKind: ConfigKind<AuthenticationConfiguration> = {
  kind: 'AuthenticationConfiguration',
  apiVersions: API_VERSIONS,
  schema: authenticationConfigurationSchema,
  validate: (c) => checkAuthentication(c, new Set()).errors,
}

/**
 * Reads an AuthenticationConfiguration (YAML or JSON) and compiles its CEL
 * expressions. Throws ConfigFileError listing every problem of the file;
 * the server must not start then.
 */
export function loadAuthenticationConfiguration(
  text: string,
  source: string,
  options: AuthenticationLoadOptions = {},
): LoadedAuthenticationConfiguration {
  let programs: JWTPrograms[] = []
  const disallowed = new Set(options.disallowedIssuers ?? [])
  const config = decodeConfig(text, source, {
    ...AuthenticationConfigurationKind,
    validate: (c) => {
      const checked = checkAuthentication(c, disallowed)
      programs = checked.programs
      return checked.errors
    },
  })
  return {
    ...config,
    jwt: config.jwt.map((a, i) => ({ ...a, programs: programs[i] ?? { extra: [], claimValidationRules: [], userValidationRules: [] } })),
  }
}

/** The legacy flags a file that configures JWT authenticators replaces. */
export const OIDC_FLAGS = [
  'oidc-issuer-url',
  'oidc-client-id',
  'oidc-ca-file',
  'oidc-username-claim',
  'oidc-username-prefix',
  'oidc-groups-claim',
  'oidc-groups-prefix',
  'oidc-signing-algs',
  'oidc-required-claim',
] as const

/**
 * The conflicts between `--authentication-config` and other flags that
 * depend on the file's content (spec Errors item 6), in upstream's words.
 * `flagsSet` holds the canonical names (no dashes) of the flags the user set.
 */
export function authenticationFlagConflicts(config: AuthenticationConfiguration, flagsSet: ReadonlySet<string>): string[] {
  const problems: string[] = []
  // Whatever the file holds, as upstream's validateOIDCOptions: flags it would not read are refused, not ignored.
  if (OIDC_FLAGS.some((f) => flagsSet.has(f))) {
    problems.push('authentication-config file and oidc-* flags are mutually exclusive')
  }
  if (config.anonymous && flagsSet.has('anonymous-auth')) {
    const detail = '--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file'
    problems.push(errorText(forbiddenField(FieldPath.root('anonymous'), detail)))
  }
  return problems
}
