/**
 * Whether a request falls under a policy's `matchConstraints` or a
 * binding's `matchResources` (upstream's policy/matching): the namespace
 * and object selectors, then the excluded rules, then the resource rules,
 * exactly or, with `matchPolicy: Equivalent`, through another served
 * version of the same resource. A match tells which group/version/resource
 * and kind the policy sees the request as.
 */
import type { Catalogue, ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import { type LabelSelectorObject, labelSelectorFromObject } from '../../machinery/label-selector.js'
import type { AdmissionAttributes } from '../attributes.js'
import { resourcesMatch } from '../webhook/rules.js'

export interface GroupVersionResource {
  group: string
  version: string
  resource: string
}

export interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

export interface MatchResources {
  namespaceSelector?: LabelSelectorObject
  objectSelector?: LabelSelectorObject
  resourceRules?: NamedRule[]
  excludeResourceRules?: NamedRule[]
  matchPolicy?: 'Exact' | 'Equivalent'
}

export interface NamedRule {
  operations?: string[]
  apiGroups?: string[]
  apiVersions?: string[]
  resources?: string[]
  scope?: string
  resourceNames?: string[]
}

/** The request as a policy sees it: the resource entry (maybe an equivalent one) and its kind. */
export interface MatchedAs {
  entry: ResourceEntry
  resource: GroupVersionResource
  kind: GroupVersionKind
}

export type MatchOutcome = { matches: false } | { matches: true; as: MatchedAs } | { error: string }

/** What matching needs besides the request: namespace labels and the served resources. */
export interface MatchContext {
  catalogue: Catalogue
  /** The namespace object, from the watch-fed index; undefined when it does not exist. */
  namespace(name: string): KubeObject | undefined
}

const has = (list: readonly string[] | undefined, value: string): boolean => !!list && (list.includes('*') || list.includes(value))

function ruleMatches(rule: NamedRule, attrs: AdmissionAttributes, entry: ResourceEntry): boolean {
  if (!has(rule.operations, attrs.operation)) return false
  if (!has(rule.apiGroups, entry.group) || !has(rule.apiVersions, entry.version)) return false
  if (!resourcesMatch(rule.resources, entry.resource, attrs.subresource ?? '')) return false
  const scope = rule.scope ?? '*'
  const namespaced = attrs.namespace !== ''
  if (scope === 'Cluster' && namespaced) return false
  if (scope === 'Namespaced' && (!namespaced || (entry.group === '' && entry.resource === 'namespaces'))) return false
  if (rule.resourceNames?.length && !rule.resourceNames.includes(attrs.name)) return false
  return true
}

function kindOf(entry: ResourceEntry, subresource: string | undefined): GroupVersionKind {
  const sub = subresource ? entry.subresources?.find((s) => s.name === subresource) : undefined
  if (sub) return { group: sub.group ?? entry.group, version: sub.version ?? entry.version, kind: sub.kind }
  return { group: entry.group, version: entry.version, kind: entry.kind }
}

function as(entry: ResourceEntry, subresource: string | undefined): MatchedAs {
  return { entry, resource: { group: entry.group, version: entry.version, resource: entry.resource }, kind: kindOf(entry, subresource) }
}

/** The other served versions of the request's resource, the preferred (catalogue) order kept. */
function equivalents(catalogue: Catalogue, entry: ResourceEntry): ResourceEntry[] {
  return catalogue.entries.filter((e) => e !== entry && e.group === entry.group && e.resource === entry.resource && e.version !== entry.version)
}

function rulesMatch(rules: readonly NamedRule[], policy: string | undefined, attrs: AdmissionAttributes, catalogue: Catalogue): MatchedAs | undefined {
  if (rules.some((r) => ruleMatches(r, attrs, attrs.entry))) return as(attrs.entry, attrs.subresource)
  if (policy !== 'Equivalent') return undefined
  for (const other of equivalents(catalogue, attrs.entry)) {
    if (rules.some((r) => ruleMatches(r, attrs, other))) return as(other, attrs.subresource)
  }
  return undefined
}

const labelsOf = (obj: KubeObject | undefined): Record<string, string> => (obj?.metadata?.labels as Record<string, string> | undefined) ?? {}

function selectorMatches(selector: LabelSelectorObject | undefined, labels: Record<string, string>): boolean {
  // Unset (older objects) means everything, as the defaulted `{}` does.
  if (!selector) return true
  return labelSelectorFromObject(selector).matches(labels)
}

/** upstream's namespace matcher: cluster-scoped requests pass; a Namespace is matched by its own labels. */
function namespaceMatches(selector: LabelSelectorObject | undefined, attrs: AdmissionAttributes, ctx: MatchContext): boolean | { error: string } {
  const isNamespace = attrs.entry.group === '' && attrs.entry.resource === 'namespaces'
  if (isNamespace) return selectorMatches(selector, labelsOf(attrs.object ?? attrs.oldObject))
  if (!attrs.namespace) return true
  if (!selector || (!selector.matchLabels && !selector.matchExpressions?.length)) return true
  const namespace = ctx.namespace(attrs.namespace)
  if (!namespace) return { error: `namespaces "${attrs.namespace}" not found` }
  return selectorMatches(selector, labelsOf(namespace))
}

function objectMatches(selector: LabelSelectorObject | undefined, attrs: AdmissionAttributes): boolean {
  if (!selector || (!selector.matchLabels && !selector.matchExpressions?.length)) return true
  return [attrs.object, attrs.oldObject].some((o) => o !== undefined && selectorMatches(selector, labelsOf(o)))
}

/**
 * The reviews, which store nothing: upstream's expression-based admission
 * (validating and mutating policies) ignores them whatever a rule says, as
 * intercepting them may break the cluster (its admission exclusion list).
 * Webhooks still see them.
 */
const EXCLUDED_FROM_POLICIES: ReadonlySet<string> = new Set([
  'authentication.k8s.io/selfsubjectreviews',
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  'authorization.k8s.io/subjectaccessreviews',
])

/** Whether `match` selects the request, and as what. */
export function matchRequest(match: MatchResources, attrs: AdmissionAttributes, ctx: MatchContext): MatchOutcome {
  if (EXCLUDED_FROM_POLICIES.has(`${attrs.entry.group}/${attrs.entry.resource}`)) return { matches: false }
  let namespaceOutcome: boolean | { error: string }
  try {
    namespaceOutcome = namespaceMatches(match.namespaceSelector, attrs, ctx)
    if (namespaceOutcome === false) return { matches: false }
    if (!objectMatches(match.objectSelector, attrs)) return { matches: false }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) }
  }
  if (rulesMatch(match.excludeResourceRules ?? [], match.matchPolicy, attrs, ctx.catalogue)) return { matches: false }
  const rules = match.resourceRules ?? []
  const matched = rules.length === 0 ? as(attrs.entry, attrs.subresource) : rulesMatch(rules, match.matchPolicy, attrs, ctx.catalogue)
  if (!matched) return { matches: false }
  if (typeof namespaceOutcome === 'object') return namespaceOutcome
  return { matches: true, as: matched }
}
