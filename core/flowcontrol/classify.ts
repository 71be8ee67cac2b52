/**
 * Which FlowSchema a request belongs to (upstream's apf matching, rule.go):
 * the schemas in order of matchingPrecedence, then name; the first whose
 * rule matches the request's subject and its resource or non-resource
 * target decides, and its distinguisher names the flow.
 */
import type { RequestInfo } from '../http/request-info.js'
import { isPlainObject, type KubeObject, type UserInfo } from '../resources/object.js'

type Obj = Record<string, unknown>

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const strings = (v: unknown): string[] => list(v).filter((s): s is string => typeof s === 'string')
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'

function subjectMatches(subject: Obj, user: UserInfo): boolean {
  switch (subject['kind']) {
    case 'User': {
      const name = obj(subject['user'])['name']
      return name === '*' || name === user.username
    }
    case 'Group': {
      const name = obj(subject['group'])['name']
      return name === '*' || (typeof name === 'string' && user.groups.includes(name))
    }
    case 'ServiceAccount': {
      const sa = obj(subject['serviceAccount'])
      if (!user.username.startsWith(SERVICE_ACCOUNT_PREFIX)) return false
      const [namespace, name] = user.username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':')
      return sa['namespace'] === namespace && (sa['name'] === '*' || sa['name'] === name)
    }
    default:
      return false
  }
}

const has = (values: string[], value: string): boolean => values.includes('*') || values.includes(value)

function resourceRuleMatches(rule: Obj, info: RequestInfo): boolean {
  if (!has(strings(rule['verbs']), info.verb) || !has(strings(rule['apiGroups']), info.apiGroup)) return false
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource
  if (!has(strings(rule['resources']), resource)) return false
  if (!info.namespace) return rule['clusterScope'] === true
  return has(strings(rule['namespaces']), info.namespace)
}

/** `*`, the exact path, or a pattern ending in `*` whose prefix the path has. */
function pathMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true
  return pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1))
}

function nonResourceRuleMatches(rule: Obj, info: RequestInfo): boolean {
  return has(strings(rule['verbs']), info.verb) && strings(rule['nonResourceURLs']).some((p) => pathMatches(p, info.path))
}

function rulesMatch(rules: Obj, user: UserInfo, info: RequestInfo): boolean {
  if (!list(rules['subjects']).some((s) => subjectMatches(obj(s), user))) return false
  return info.isResourceRequest
    ? list(rules['resourceRules']).some((r) => resourceRuleMatches(obj(r), info))
    : list(rules['nonResourceRules']).some((r) => nonResourceRuleMatches(obj(r), info))
}

export function flowSchemaMatches(schema: KubeObject, user: UserInfo, info: RequestInfo): boolean {
  return list(obj(schema['spec'])['rules']).some((r) => rulesMatch(obj(r), user, info))
}

export const precedenceOf = (schema: KubeObject): number => {
  const p = obj(schema['spec'])['matchingPrecedence']
  return typeof p === 'number' ? p : 1000
}

/** Upstream's order: lower matchingPrecedence first, then name. */
export function byPrecedence(a: KubeObject, b: KubeObject): number {
  return precedenceOf(a) - precedenceOf(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')
}

/** The flow within a schema: the user's name, the namespace, or one flow for all. */
export function flowDistinguisher(schema: KubeObject, user: UserInfo, info: RequestInfo): string {
  switch (obj(obj(schema['spec'])['distinguisherMethod'])['type']) {
    case 'ByUser':
      return user.username
    case 'ByNamespace':
      return info.namespace
    default:
      return ''
  }
}

export const priorityLevelNameOf = (schema: KubeObject): string => String(obj(obj(schema['spec'])['priorityLevelConfiguration'])['name'] ?? '')
