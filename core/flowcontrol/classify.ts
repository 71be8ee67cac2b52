/**
 * Which FlowSchema a request belongs to (upstream's apf matching, rule.go):
 * the schemas in order of matchingPrecedence, then name; the first whose
 * rule matches the request's subject and its resource or non-resource
 * target decides, and its distinguisher names the flow. Each schema is
 * compiled once, when the configuration changes, into sets and closures,
 * so that classifying a request allocates nothing.
 */
import type { RequestInfo } from '../machinery/request-info.js'
import { isPlainObject, type KubeObject, type UserInfo } from '../machinery/object.js'

type Obj = Record<string, unknown>
type Matcher = (user: UserInfo, info: RequestInfo) => boolean

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const strings = (v: unknown): string[] => list(v).filter((s): s is string => typeof s === 'string')
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'

/** A set test where `*` matches anything. */
function member(values: unknown): (value: string) => boolean {
  const set = new Set(strings(values))
  return set.has('*') ? () => true : (value) => set.has(value)
}

function subjectMatcher(subject: Obj): (user: UserInfo) => boolean {
  switch (subject['kind']) {
    case 'User': {
      const name = obj(subject['user'])['name']
      return (user) => name === '*' || name === user.username
    }
    case 'Group': {
      const name = obj(subject['group'])['name']
      return (user) => name === '*' || (typeof name === 'string' && user.groups.includes(name))
    }
    case 'ServiceAccount': {
      const sa = obj(subject['serviceAccount'])
      const prefix = `${SERVICE_ACCOUNT_PREFIX}${String(sa['namespace'])}:`
      return (user) => user.username.startsWith(prefix) && (sa['name'] === '*' || user.username === `${prefix}${String(sa['name'])}`)
    }
    default:
      return () => false
  }
}

function resourceRuleMatcher(rule: Obj): Matcher {
  const verb = member(rule['verbs'])
  const group = member(rule['apiGroups'])
  const resource = member(rule['resources'])
  const namespace = member(rule['namespaces'])
  const clusterScope = rule['clusterScope'] === true
  return (_user, info) =>
    verb(info.verb) &&
    group(info.apiGroup) &&
    resource(info.subresource ? `${info.resource}/${info.subresource}` : info.resource) &&
    (info.namespace ? namespace(info.namespace) : clusterScope)
}

/** `*`, the exact path, or a pattern ending in `*` whose prefix the path has. */
function pathMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true
  return pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1))
}

function nonResourceRuleMatcher(rule: Obj): Matcher {
  const verb = member(rule['verbs'])
  const patterns = strings(rule['nonResourceURLs'])
  return (_user, info) => verb(info.verb) && patterns.some((p) => pathMatches(p, info.path))
}

function rulesMatcher(rules: Obj): Matcher {
  const subjects = list(rules['subjects']).map((s) => subjectMatcher(obj(s)))
  const resourceRules = list(rules['resourceRules']).map((r) => resourceRuleMatcher(obj(r)))
  const nonResourceRules = list(rules['nonResourceRules']).map((r) => nonResourceRuleMatcher(obj(r)))
  return (user, info) =>
    subjects.some((s) => s(user)) && (info.isResourceRequest ? resourceRules : nonResourceRules).some((r) => r(user, info))
}

export interface CompiledFlowSchema {
  readonly object: KubeObject
  readonly name: string
  /** The priority level it names. */
  readonly levelName: string
  matches(user: UserInfo, info: RequestInfo): boolean
  /** The flow within the schema: the user's name, the namespace, or one flow for all. */
  distinguish(user: UserInfo, info: RequestInfo): string
}

/** Compiled schemas by the frozen object they came from: servers begun from one start-up template share those objects. */
const compiled = new WeakMap<KubeObject, CompiledFlowSchema>()

export function compileFlowSchema(schema: KubeObject): CompiledFlowSchema {
  let done = compiled.get(schema)
  if (!done) {
    done = compile(schema)
    // Only a frozen object stays as it was compiled.
    if (Object.isFrozen(schema) && Object.isFrozen(schema['spec'])) compiled.set(schema, done)
  }
  return done
}

function compile(schema: KubeObject): CompiledFlowSchema {
  const spec = obj(schema['spec'])
  const rules = list(spec['rules']).map((r) => rulesMatcher(obj(r)))
  const method = obj(spec['distinguisherMethod'])['type']
  return {
    object: schema,
    name: schema.metadata.name ?? '',
    levelName: String(obj(spec['priorityLevelConfiguration'])['name'] ?? ''),
    matches: (user, info) => rules.some((r) => r(user, info)),
    distinguish: method === 'ByUser' ? (user) => user.username : method === 'ByNamespace' ? (_user, info) => info.namespace : () => '',
  }
}

const precedenceOf = (schema: KubeObject): number => {
  const p = obj(schema['spec'])['matchingPrecedence']
  return typeof p === 'number' ? p : 1000
}

/**
 * Upstream's order: lower matchingPrecedence first, then name, compared as
 * Go compares strings (code unit by code unit; `localeCompare` would also
 * load ICU's collation tables, megabytes of memory, at every start).
 */
export function byPrecedence(a: KubeObject, b: KubeObject): number {
  const nameA = a.metadata.name ?? ''
  const nameB = b.metadata.name ?? ''
  return precedenceOf(a) - precedenceOf(b) || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0)
}
