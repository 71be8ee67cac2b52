/**
 * Compiling the CEL of admission objects (webhook match conditions, policy
 * validations, audit annotations, message expressions) against the variables
 * upstream declares for them (apiserver/pkg/admission/plugin/cel): `object`,
 * `oldObject` and `params` are dyn, `request` is an AdmissionRequest, and
 * `authorizer` the authorization library's chain of checks. Nothing is
 * evaluated here; a stored expression is only parsed and type-checked, so a
 * typo is a 422 at write time rather than a failure on every request.
 */
import type { Environment } from '@marcbachmann/cel-js'
import { parseAndCheck } from '../../cel/checked.js'
import { kubernetesEnvironment } from '../../cel/library/index.js'

/** Which optional variables an expression may use, as upstream's OptionalVariableDeclarations. */
export interface AdmissionVariables {
  params: boolean
  authorizer: boolean
  /**
   * The types of the policy's `spec.variables` an expression may name
   * (`variables.<name>`), each its expression's checked type, as upstream's
   * composition declares them; false when the policy has none.
   */
  variables: false | Readonly<Record<string, string>>
}

const GROUP_VERSION_KIND = { group: 'string', version: 'string', kind: 'string' } as const
const GROUP_VERSION_RESOURCE = { group: 'string', version: 'string', resource: 'string' } as const

/** upstream's AdmissionRequest as CEL sees it. */
export const ADMISSION_REQUEST_FIELDS = {
  uid: 'string',
  kind: GROUP_VERSION_KIND,
  resource: GROUP_VERSION_RESOURCE,
  subResource: 'string',
  requestKind: GROUP_VERSION_KIND,
  requestResource: GROUP_VERSION_RESOURCE,
  requestSubResource: 'string',
  name: 'string',
  namespace: 'string',
  operation: 'string',
  userInfo: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' },
  dryRun: 'bool',
  options: 'dyn',
} as const

// The authorization library's receivers. Expressions are never run here, so
// the methods only need their signatures; calling one is a programming error.
class Authorizer {}
class PathCheck {}
class GroupCheck {}
class ResourceCheck {}
class Decision {}

const notEvaluated = (): never => {
  throw new Error('admission expressions are type-checked here, not evaluated')
}

function withAuthorizer(env: Environment): Environment {
  const methods = [
    'Authorizer.path(string): PathCheck',
    'Authorizer.group(string): GroupCheck',
    'Authorizer.serviceAccount(string, string): Authorizer',
    'PathCheck.check(string): Decision',
    'GroupCheck.resource(string): ResourceCheck',
    'ResourceCheck.subresource(string): ResourceCheck',
    'ResourceCheck.namespace(string): ResourceCheck',
    'ResourceCheck.name(string): ResourceCheck',
    'ResourceCheck.fieldSelector(string): ResourceCheck',
    'ResourceCheck.labelSelector(string): ResourceCheck',
    'ResourceCheck.check(string): Decision',
    'Decision.allowed(): bool',
    'Decision.reason(): string',
    'Decision.errored(): bool',
    'Decision.error(): string',
  ]
  env
    .registerType('PathCheck', PathCheck)
    .registerType('GroupCheck', GroupCheck)
    .registerType('ResourceCheck', ResourceCheck)
    .registerType('Decision', Decision)
    .registerType('Authorizer', { ctor: Authorizer, fields: { requestResource: 'ResourceCheck' } })
  for (const signature of methods) env.registerFunction(signature, notEvaluated)
  return env.registerVariable('authorizer', 'Authorizer')
}

function build(vars: AdmissionVariables): Environment {
  let env = kubernetesEnvironment()
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('request', { schema: ADMISSION_REQUEST_FIELDS })
  if (vars.params) env = env.registerVariable('params', 'dyn')
  if (vars.authorizer) env = withAuthorizer(env)
  return env
}

const built = new Map<string, Environment>()

function environment(vars: AdmissionVariables): Environment {
  const key = `${vars.params}/${vars.authorizer}`
  let env = built.get(key)
  if (!env) {
    env = build(vars)
    built.set(key, env)
  }
  // Each policy's variables are a type of their own; a copy of the shared environment is cheap.
  return vars.variables ? env.clone().registerVariable('variables', { schema: { ...vars.variables } }) : env
}

/**
 * A variable's checked type as a field type of `variables`: scalars, lists
 * and maps keep theirs, anything else (an object, an optional) is dyn, as
 * upstream's composition converts them (convertCelTypeToDeclType).
 */
export function variableFieldType(type: string): string {
  const generic = /^(list|map)<(.*)>$/.exec(type)
  if (generic) {
    const params = splitTopLevel(generic[2] ?? '').map(variableFieldType)
    return `${generic[1]}<${params.join(', ')}>`
  }
  if (type === 'list') return 'list<dyn>'
  if (type === 'map') return 'map<dyn, dyn>'
  return SCALAR_TYPES.has(type) ? type : 'dyn'
}

const SCALAR_TYPES = new Set(['bool', 'int', 'uint', 'double', 'string', 'bytes', 'null', 'dyn', 'google.protobuf.Timestamp', 'google.protobuf.Duration'])

/** `a, map<b, c>` split at the commas outside angle brackets. */
function splitTopLevel(params: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < params.length; i++) {
    const c = params[i]
    if (c === '<') depth++
    else if (c === '>') depth--
    else if (c === ',' && depth === 0) {
      parts.push(params.slice(start, i).trim())
      start = i + 1
    }
  }
  parts.push(params.slice(start).trim())
  return parts
}

/** A result type in the library's spelling, with cel-go's for messages. */
export type AdmissionResultType = 'bool' | 'string' | 'null'

const GO_TYPE_NAMES: Record<AdmissionResultType, string> = { bool: 'bool', string: 'string', null: 'null_type' }

/**
 * Why `expression` does not compile in the admission environment, in
 * upstream's words (`compilation failed: ERROR: <input>:1:5: ...`,
 * `must evaluate to bool`), or undefined when it does. `accepted` lists the
 * result types allowed; `any` allows every type (variables).
 */
export function admissionCompileError(
  expression: string,
  accepted: readonly AdmissionResultType[] | 'any',
  vars: AdmissionVariables,
): string | undefined {
  return admissionCompile(expression, accepted, vars).error
}

/** Compiles `expression` as admissionCompileError does; its checked type too when it compiles (a variable's). */
export function admissionCompile(
  expression: string,
  accepted: readonly AdmissionResultType[] | 'any',
  vars: AdmissionVariables,
): { error?: string; type?: string } {
  const outcome = parseAndCheck(environment(vars), expression)
  // The checker's "No such key" on a declared object (`request`, `variables`) is cel-go's undefined field.
  if ('issue' in outcome) return { error: `compilation failed: ${outcome.issue}` }
  if (accepted === 'any' || accepted.includes(outcome.type as AdmissionResultType)) return { type: outcome.type }
  const names = accepted.map((t) => GO_TYPE_NAMES[t])
  return { error: names.length === 1 ? `must evaluate to ${names[0]}` : `must evaluate to one of [${names.join(' ')}]` }
}
