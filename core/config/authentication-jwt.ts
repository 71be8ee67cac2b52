/**
 * Rules for one JWT authenticator (upstream's validateJWTAuthenticator):
 * the issuer, claim validation rules, claim mappings and user validation
 * rules, with every CEL expression compiled here so that its syntax or type
 * error is reported with its path at start-up. The compiled programs are
 * returned for the authenticator to run.
 */
import { type CelProgram, type CelResultType, compile, selectsField } from '../cel/compile.js'
import type { CelVariable } from '../cel/environments.js'
import { type FieldError, type FieldPath, duplicate, invalid, required } from '../machinery/field.js'
import { domainPrefixedPathErrors } from '../machinery/names.js'
import { validateIssuer } from './authentication-issuer.js'
import type { ClaimValidationRule, JWTAuthenticator, PrefixedClaimOrExpression } from './authentication-schema.js'
import { appendAll } from '../machinery/append-all.js'

/** A rule's program with the message shown when it evaluates to false. */
export interface CelRule {
  program: CelProgram
  message: string
}

/** The compiled expressions of one authenticator; a mapping set by claim has no program. */
export interface JWTPrograms {
  username?: CelProgram
  groups?: CelProgram
  uid?: CelProgram
  extra: { key: string; program: CelProgram }[]
  claimValidationRules: CelRule[]
  userValidationRules: CelRule[]
}

const EMAIL_VERIFIED_RULE =
  'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'

/** Collects the problems and programs of one authenticator as the rules descend. */
class JWTCheck {
  readonly errs: FieldError[] = []
  readonly programs: JWTPrograms = { extra: [], claimValidationRules: [], userValidationRules: [] }
  usesEmailVerified = false

  compile(variable: CelVariable, expression: string, expected: readonly CelResultType[], path: FieldPath): CelProgram | undefined {
    const result = compile(variable, expression, expected)
    if ('program' in result) return result.program
    this.errs.push(invalid(path, expression, result.reason))
    return undefined
  }

  /** Notes `claims.email_verified` use by a compiled claims expression. */
  noteEmailVerified(program: CelProgram): void {
    this.usesEmailVerified ||= selectsField(program.ast, 'claims', 'email_verified')
  }
}

function checkClaimValidationRules(check: JWTCheck, rules: ClaimValidationRule[], path: FieldPath): void {
  const seenClaims = new Set<string>()
  const seenExpressions = new Set<string>()
  rules.forEach((rule, i) => {
    const p = path.index(i)
    if (rule.claim && rule.expression) {
      check.errs.push(invalid(p, rule.claim, "claim and expression can't both be set"))
    } else if (!rule.claim && !rule.expression) {
      check.errs.push(required(p, 'claim or expression is required'))
    } else if (rule.claim) {
      if (rule.message) check.errs.push(invalid(p.child('message'), rule.message, 'may not be specified when claim is set'))
      if (seenClaims.has(rule.claim)) check.errs.push(duplicate(p.child('claim'), rule.claim))
      seenClaims.add(rule.claim)
    } else {
      if (rule.requiredValue) {
        check.errs.push(invalid(p.child('requiredValue'), rule.requiredValue, 'may not be specified when expression is set'))
      }
      if (seenExpressions.has(rule.expression)) {
        check.errs.push(duplicate(p.child('expression'), rule.expression))
        return
      }
      seenExpressions.add(rule.expression)
      const program = check.compile('claims', rule.expression, ['bool'], p.child('expression'))
      if (program) {
        check.programs.claimValidationRules.push({ program, message: rule.message })
        check.noteEmailVerified(program)
      }
    }
  })
}

/** username and groups: claim (with a prefix) or expression, never both. */
function checkPrefixed(
  check: JWTCheck,
  m: PrefixedClaimOrExpression,
  path: FieldPath,
  requiredMapping: boolean,
  expected: readonly CelResultType[],
): CelProgram | undefined {
  if (m.expression && m.claim) {
    check.errs.push(invalid(path, '', "claim and expression can't both be set"))
  } else if (!m.expression && !m.claim) {
    if (requiredMapping) check.errs.push(required(path, 'claim or expression is required'))
  } else if (m.expression) {
    if (m.prefix !== undefined) check.errs.push(invalid(path.child('prefix'), m.prefix, 'may not be specified when expression is set'))
    return check.compile('claims', m.expression, expected, path.child('expression'))
  } else if (m.prefix === undefined) {
    check.errs.push(
      required(path.child('prefix'), 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'),
    )
  }
  return undefined
}

/** True for keys under k8s.io, kubernetes.io and their subdomains, which Kubernetes reserves. */
function isReservedDomain(key: string): boolean {
  const slash = key.indexOf('/')
  const domain = slash >= 0 ? key.slice(0, slash) : ''
  return ['k8s.io', 'kubernetes.io'].some((d) => domain === d || domain.endsWith(`.${d}`))
}

function checkExtra(check: JWTCheck, extra: JWTAuthenticator['claimMappings']['extra'], path: FieldPath): void {
  const seenKeys = new Set<string>()
  extra.forEach((mapping, i) => {
    const p = path.index(i)
    const keyPath = p.child('key')
    appendAll(check.errs, domainPrefixedPathErrors(keyPath, mapping.key))
    if (mapping.key !== mapping.key.toLowerCase()) check.errs.push(invalid(keyPath, mapping.key, 'must be lowercase'))
    if (isReservedDomain(mapping.key)) {
      check.errs.push(invalid(keyPath, mapping.key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'))
    }
    if (seenKeys.has(mapping.key)) {
      check.errs.push(duplicate(keyPath, mapping.key))
      return
    }
    seenKeys.add(mapping.key)
    if (!mapping.valueExpression) {
      check.errs.push(required(p.child('valueExpression')))
      return
    }
    const program = check.compile('claims', mapping.valueExpression, ['string', 'list<string>'], p.child('valueExpression'))
    if (program) {
      check.programs.extra.push({ key: mapping.key, program })
      check.noteEmailVerified(program)
    }
  })
}

function checkClaimMappings(check: JWTCheck, m: JWTAuthenticator['claimMappings'], path: FieldPath): void {
  const usernamePath = path.child('username')
  const errorsBefore = check.errs.length
  const username = checkPrefixed(check, m.username, usernamePath, true, ['string'])
  let usesEmail = false
  if (username && check.errs.length === errorsBefore) {
    check.programs.username = username
    usesEmail = selectsField(username.ast, 'claims', 'email')
    check.noteEmailVerified(username)
  }

  const groups = checkPrefixed(check, m.groups, path.child('groups'), false, ['string', 'list<string>'])
  if (groups) check.programs.groups = groups

  const uidPath = path.child('uid')
  if (m.uid.claim && m.uid.expression) {
    check.errs.push(invalid(uidPath, '', "claim and expression can't both be set"))
  } else if (m.uid.expression) {
    const uid = check.compile('claims', m.uid.expression, ['string'], uidPath.child('expression'))
    if (uid) check.programs.uid = uid
  }

  checkExtra(check, m.extra, path.child('extra'))

  if (usesEmail && !check.usesEmailVerified) {
    check.errs.push(invalid(usernamePath.child('expression'), m.username.expression, EMAIL_VERIFIED_RULE))
  }
}

function checkUserValidationRules(check: JWTCheck, rules: JWTAuthenticator['userValidationRules'], path: FieldPath): void {
  const seen = new Set<string>()
  rules.forEach((rule, i) => {
    const p = path.index(i).child('expression')
    if (!rule.expression) {
      check.errs.push(required(p))
      return
    }
    if (seen.has(rule.expression)) {
      check.errs.push(duplicate(p, rule.expression))
      return
    }
    seen.add(rule.expression)
    const program = check.compile('user', rule.expression, ['bool'], p)
    if (program) check.programs.userValidationRules.push({ program, message: rule.message })
  })
}

/** Every problem of one authenticator, and its compiled expressions. */
export function checkJWTAuthenticator(
  a: JWTAuthenticator,
  path: FieldPath,
  disallowedIssuers: ReadonlySet<string>,
): { errors: FieldError[]; programs: JWTPrograms } {
  const check = new JWTCheck()
  appendAll(check.errs, validateIssuer(a.issuer, path.child('issuer'), disallowedIssuers))
  checkClaimValidationRules(check, a.claimValidationRules, path.child('claimValidationRules'))
  checkClaimMappings(check, a.claimMappings, path.child('claimMappings'))
  checkUserValidationRules(check, a.userValidationRules, path.child('userValidationRules'))
  return { errors: check.errs, programs: check.programs }
}
