/**
 * Quota scopes (spec.scopes and spec.scopeSelector of a ResourceQuota) and
 * which pods they select, as upstream's pod evaluator decides: Terminating
 * (activeDeadlineSeconds set), BestEffort (no request or limit of cpu or
 * memory), PriorityClass (by the pod's class name), CrossNamespacePodAffinity.
 */
import { podQOSClass } from '../resources/core/pod-spec-resources.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { objectsOf, specOf } from './pod-resources.js'

export interface ScopeSelector {
  scopeName: string
  operator: string
  values: string[]
}

/** A quota's scopes as selector requirements: each plain scope is `Exists`, then the selector's expressions. */
export function scopeSelectorsOf(quota: KubeObject): ScopeSelector[] {
  const spec = specOf(quota)
  const plain = Array.isArray(spec['scopes']) ? spec['scopes'].filter((s): s is string => typeof s === 'string') : []
  const selector = isPlainObject(spec['scopeSelector']) ? spec['scopeSelector'] : {}
  return [
    ...plain.map((scopeName) => ({ scopeName, operator: 'Exists', values: [] })),
    ...objectsOf(selector['matchExpressions']).map((e) => ({
      scopeName: String(e['scopeName'] ?? ''),
      operator: String(e['operator'] ?? ''),
      values: Array.isArray(e['values']) ? e['values'].map(String) : [],
    })),
  ]
}

const isTerminating = (spec: Record<string, unknown>): boolean =>
  typeof spec['activeDeadlineSeconds'] === 'number' && spec['activeDeadlineSeconds'] >= 0

function usesCrossNamespaceAffinity(spec: Record<string, unknown>): boolean {
  const affinity = isPlainObject(spec['affinity']) ? spec['affinity'] : {}
  return ['podAffinity', 'podAntiAffinity'].some((kind) => {
    const a = isPlainObject(affinity[kind]) ? affinity[kind] : {}
    const terms = [
      ...objectsOf(a['requiredDuringSchedulingIgnoredDuringExecution']),
      ...objectsOf(a['preferredDuringSchedulingIgnoredDuringExecution']).map((w) => (isPlainObject(w['podAffinityTerm']) ? w['podAffinityTerm'] : {})),
    ]
    return terms.some((t) => (Array.isArray(t['namespaces']) && t['namespaces'].length > 0) || t['namespaceSelector'] !== undefined)
  })
}

/**
 * The PriorityClass scope as a label selector over `{PriorityClass: <class>}`:
 * the key is always there (an empty class is an empty value), as upstream builds the set.
 */
function priorityClassMatches(selector: ScopeSelector, className: string): boolean {
  switch (selector.operator) {
    case 'In':
      return selector.values.includes(className)
    case 'NotIn':
      return !selector.values.includes(className)
    case 'Exists':
      return className !== ''
    default:
      return false
  }
}

/** Whether one scope requirement selects the pod. */
export function podMatchesScope(selector: ScopeSelector, pod: KubeObject): boolean {
  const spec = specOf(pod)
  switch (selector.scopeName) {
    case 'Terminating':
      return isTerminating(spec)
    case 'NotTerminating':
      return !isTerminating(spec)
    case 'BestEffort':
      return podQOSClass(spec) === 'BestEffort'
    case 'NotBestEffort':
      return podQOSClass(spec) !== 'BestEffort'
    case 'PriorityClass':
      return priorityClassMatches(selector, typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : '')
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(spec)
    default:
      return false
  }
}

/** Go's %v of a list of ScopedResourceSelectorRequirement, as upstream's scope messages print them. */
export function printScopes(selectors: readonly ScopeSelector[]): string {
  return `[${selectors.map((s) => `{${s.scopeName} ${s.operator} [${s.values.join(' ')}]}`).join(' ')}]`
}
