/**
 * From verified claims to a user, as upstream's OIDC authenticator does it:
 * username, groups, uid and extra by claim (with prefix) or by CEL
 * expression, the `email_verified` rule of the `email` claim, required
 * claims, claim validation rules, then user validation rules over the
 * mapped user. Every refusal is worded as upstream's (`oidc: ...`); a false
 * rule carries its message.
 */
import type { CelProgram } from '../../cel/compile.js'
import { CelEvaluationError, claimsActivation, userActivation } from '../../cel/evaluate.js'
import type { CelRule, LoadedJWTAuthenticator } from '../../config/authentication.js'
import type { UserInfo } from '../../machinery/object.js'
import { celErrorText } from '../../cel/errors.js'

/** A refusal with upstream's message. */
export class ClaimError extends Error {}

function run(program: CelProgram, activation: Record<string, unknown>): unknown {
  try {
    return program.run(activation)
  } catch (err) {
    if (err instanceof CelEvaluationError) throw err
    throw new CelEvaluationError(program.expression, celErrorText(err))
  }
}

/** Evaluates, prefixing a failure as upstream words the step. */
function evaluateStep(program: CelProgram, activation: Record<string, unknown>, step: string): unknown {
  try {
    return run(program, activation)
  } catch (err) {
    throw new ClaimError(`oidc: error evaluating ${step}: ${(err as Error).message}`)
  }
}

/** Go's json.Unmarshal wording for a claim of the wrong JSON type. */
function goTypeOf(value: unknown): string {
  if (typeof value === 'number') return 'number'
  if (typeof value === 'boolean') return 'bool'
  if (Array.isArray(value)) return 'array'
  if (value === null) return 'null'
  return typeof value === 'object' ? 'object' : 'string'
}

function stringClaim(claims: Record<string, unknown>, name: string): string {
  if (!(name in claims)) throw new Error('claim not present')
  const value = claims[name]
  if (value === null) return ''
  if (typeof value !== 'string') throw new Error(`json: cannot unmarshal ${goTypeOf(value)} into Go value of type string`)
  return value
}

/** A claim holding a string or a list of strings (issue 33290 upstream: a single role string is a group). */
function stringOrArrayClaim(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value === null) return []
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value
  throw new Error(`json: cannot unmarshal ${goTypeOf(value)} into Go value of type string`)
}

/** "" and [] count as absent, empty strings in a list are dropped (upstream's convertCELValueToStringList). */
function stringList(value: unknown): string[] {
  if (value === null) return []
  if (typeof value === 'string') return value ? [value] : []
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.filter((v) => v !== '')
  throw new Error('expression must return a string or a list of strings')
}

function username(a: LoadedJWTAuthenticator, claims: Record<string, unknown>, activation: () => Record<string, unknown>): string {
  const program = a.programs.username
  if (program) {
    const value = evaluateStep(program, activation(), 'username claim expression')
    if (typeof value !== 'string') throw new ClaimError('oidc: error evaluating username claim expression: username claim expression must return a string')
    return value
  }
  const claim = a.claimMappings.username.claim
  let name: string
  try {
    name = stringClaim(claims, claim)
  } catch (err) {
    throw new ClaimError(`oidc: parse username claims ${JSON.stringify(claim)}: ${(err as Error).message}`)
  }
  // An address the provider has not verified is not an identity (OpenID Connect Core, standard claims).
  if (claim === 'email' && 'email_verified' in claims) {
    const verified = claims['email_verified']
    if (typeof verified !== 'boolean') {
      throw new ClaimError(`oidc: parse 'email_verified' claim: json: cannot unmarshal ${goTypeOf(verified)} into Go value of type bool`)
    }
    if (!verified) throw new ClaimError('oidc: email not verified')
  }
  return (a.claimMappings.username.prefix ?? '') + name
}

function groups(a: LoadedJWTAuthenticator, claims: Record<string, unknown>, activation: () => Record<string, unknown>): string[] {
  const claim = a.claimMappings.groups.claim
  if (claim && claim in claims) {
    let values: string[]
    try {
      values = stringOrArrayClaim(claims[claim])
    } catch (err) {
      throw new ClaimError(`oidc: parse groups claim ${JSON.stringify(claim)}: ${(err as Error).message}`)
    }
    const prefix = a.claimMappings.groups.prefix ?? ''
    return values.map((g) => prefix + g)
  }
  const program = a.programs.groups
  if (!program) return []
  try {
    return stringList(evaluateStep(program, activation(), 'group claim expression'))
  } catch (err) {
    if (err instanceof ClaimError) throw err
    throw new ClaimError(`oidc: error evaluating group claim expression: ${(err as Error).message}`)
  }
}

function uid(a: LoadedJWTAuthenticator, claims: Record<string, unknown>, activation: () => Record<string, unknown>): string {
  const claim = a.claimMappings.uid.claim
  if (claim) {
    try {
      return stringClaim(claims, claim)
    } catch (err) {
      throw new ClaimError(`oidc: parse uid claim ${JSON.stringify(claim)}: ${(err as Error).message}`)
    }
  }
  const program = a.programs.uid
  if (!program) return ''
  const value = evaluateStep(program, activation(), 'uid claim expression')
  if (typeof value !== 'string') throw new ClaimError('oidc: error evaluating uid claim expression: uid claim expression must return a string')
  return value
}

function extra(a: LoadedJWTAuthenticator, activation: () => Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const { key, program } of a.programs.extra) {
    let values: string[]
    try {
      values = stringList(run(program, activation()))
    } catch (err) {
      const detail = err instanceof CelEvaluationError ? err.message : `${program.expression}: ${(err as Error).message}`
      throw new ClaimError(`oidc: error evaluating extra claim expression: ${detail}`)
    }
    if (values.length) out[key] = values
  }
  return out
}

/** The first rule that is false, worded as upstream's checkValidationRulesEvaluation. */
function failedRule(rules: readonly CelRule[], activation: Record<string, unknown>): string | undefined {
  for (const rule of rules) {
    const value = run(rule.program, activation)
    if (typeof value !== 'boolean') return 'validation expression must return a boolean'
    if (!value) return `validation expression '${rule.program.expression}' failed: ${rule.message}`
  }
  return undefined
}

function checkRequiredClaims(a: LoadedJWTAuthenticator, claims: Record<string, unknown>): void {
  for (const rule of a.claimValidationRules) {
    if (!rule.claim) continue
    if (!(rule.claim in claims)) throw new ClaimError(`oidc: required claim ${rule.claim} not present in ID token`)
    let value: string
    try {
      value = stringClaim(claims, rule.claim)
    } catch (err) {
      throw new ClaimError(`oidc: parse claim ${rule.claim}: ${(err as Error).message}`)
    }
    if (value !== rule.requiredValue) {
      throw new ClaimError(`oidc: required claim ${rule.claim} value does not match. Got = ${value}, want = ${rule.requiredValue}`)
    }
  }
}

/** The user the verified claims stand for; throws ClaimError with upstream's message when refused. */
export function userFromClaims(a: LoadedJWTAuthenticator, claims: Record<string, unknown>): UserInfo {
  // The claims are shaped for CEL once, and only when an expression needs them.
  let cached: Record<string, unknown> | undefined
  const activation = (): Record<string, unknown> => {
    if (!cached) {
      try {
        cached = claimsActivation(claims)
      } catch (err) {
        throw new ClaimError(`oidc: could not convert claims to unstructured: ${(err as Error).message}`)
      }
    }
    return cached
  }
  const user: UserInfo = { username: username(a, claims, activation), groups: groups(a, claims, activation) }
  const id = uid(a, claims, activation)
  if (id) user.uid = id
  const extras = extra(a, activation)
  if (Object.keys(extras).length) user.extra = extras

  checkRequiredClaims(a, claims)
  const claimRules = a.programs.claimValidationRules
  if (claimRules.length) {
    let failed: string | undefined
    try {
      failed = failedRule(claimRules, activation())
    } catch (err) {
      throw new ClaimError(`oidc: error evaluating claim validation expression: ${(err as Error).message}`)
    }
    if (failed) throw new ClaimError(`oidc: error evaluating claim validation expression: ${failed}`)
  }
  const userRules = a.programs.userValidationRules
  if (userRules.length) {
    let failed: string | undefined
    try {
      failed = failedRule(userRules, userActivation(user))
    } catch (err) {
      throw new ClaimError(`oidc: error evaluating user info validation rule: ${(err as Error).message}`)
    }
    if (failed) throw new ClaimError(`oidc: error evaluating user info validation rule: ${failed}`)
  }
  return user
}
