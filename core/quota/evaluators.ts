/**
 * Quota evaluators (upstream's pkg/quota/v1/evaluator/core and the generic
 * object counter): for one resource, which quota names it answers for,
 * which scopes select an object, what one object uses, and what a pod must
 * state when a quota constrains cpu or memory.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { containerResources, objectsOf, podUsageLists, specOf } from './pod-resources.js'
import { add, amountOf, mask, parseAmount, type ResourceList } from './resource-list.js'
import { podMatchesScope, type ScopeSelector } from './scopes.js'

/** The writes an evaluator may charge for (admission's operations, as quota reads them). */
export type QuotaOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

export interface QuotaEvaluator {
  readonly group: string
  readonly resource: string
  /** Whether a request of this operation (on this subresource) can change usage. */
  handles(operation: QuotaOperation, subresource: string | undefined): boolean
  /** The quota names among `names` this evaluator computes. */
  matchingResources(names: readonly string[]): string[]
  /** Whether one scope requirement selects the object; resources without scopes are never selected by one. */
  matchesScope(selector: ScopeSelector, object: KubeObject): boolean
  /** Why the object may not be admitted under a quota constraining `required`, or undefined. */
  constraints(required: readonly string[], object: KubeObject): string | undefined
  /** What the object uses. */
  usage(object: KubeObject, now: Date): ResourceList
}

const one = (): ReturnType<typeof amountOf> => amountOf(1)

/** `count/pods`, `count/deployments.apps`: the object-count quota name of a resource. */
export const objectCountName = (group: string, resource: string): string => `count/${group ? `${resource}.${group}` : resource}`

const intersection = (names: readonly string[], known: ReadonlySet<string>): string[] => names.filter((n) => known.has(n))

/** Counts objects on create (upstream's object count evaluator); `alias` is the old bare name (`configmaps`). */
export function objectCountEvaluator(group: string, resource: string, alias?: string): QuotaEvaluator {
  const names = new Set([objectCountName(group, resource), ...(alias ? [alias] : [])])
  return {
    group,
    resource,
    handles: (operation) => operation === 'CREATE',
    matchingResources: (input) => intersection(input, names),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: () => Object.fromEntries([...names].map((n) => [n, one()])),
  }
}

// ---- pods

const POD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'count/pods',
])
const POD_RESOURCE_PREFIXES = ['hugepages-', 'requests.hugepages-']
/** The names that every container must state once a quota constrains them (a historical rule upstream keeps). */
const MUST_BE_STATED = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'])

/** An extended resource (`example.com/gpu`): qualified, outside kubernetes.io, not itself prefixed with `requests.`. */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false
  return /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name)
}

const isExtendedQuotaName = (name: string): boolean => name.startsWith('requests.') && isExtendedResourceName(name.slice('requests.'.length))

/** What requests and limits of cpu, memory, storage, hugepages and extended resources count as, plus one pod. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = { pods: one() }
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests[name]
    if (request) out[name] = out[`requests.${name}`] = request
    const limit = limits[name]
    if (limit) out[`limits.${name}`] = limit
  }
  for (const [name, request] of Object.entries(requests)) {
    if (name.startsWith('hugepages-')) out[name] = out[`requests.${name}`] = request
    if (isExtendedResourceName(name)) out[`requests.${name}`] = request
  }
  return out
}

/** A pod in a terminal phase, or stuck past its grace period while deleted, uses no compute resources. */
function podCountsForCompute(pod: KubeObject, now: Date): boolean {
  const status = isPlainObject(pod['status']) ? pod['status'] : {}
  if (status['phase'] === 'Succeeded' || status['phase'] === 'Failed') return false
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata
  if (deletionTimestamp && deletionGracePeriodSeconds !== undefined)
    return now.getTime() <= Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000
  return true
}

export const podEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'pods',
  // A resize is charged what it adds, as upstream's pod evaluator handles it since in-place resize.
  handles: (operation, subresource) => (operation === 'CREATE' && !subresource) || (operation === 'UPDATE' && subresource === 'resize'),
  matchingResources: (input) =>
    input.filter((n) => POD_RESOURCES.has(n) || POD_RESOURCE_PREFIXES.some((p) => n.startsWith(p)) || isExtendedQuotaName(n)),
  matchesScope: podMatchesScope,
  constraints(required, pod) {
    const needed = required.filter((n) => MUST_BE_STATED.has(n))
    if (needed.length === 0) return undefined
    const missing = new Map<string, Set<string>>()
    const spec = specOf(pod)
    for (const c of [...objectsOf(spec['containers']), ...objectsOf(spec['initContainers'])]) {
      const stated = computeUsage(containerResources(c, 'requests'), containerResources(c, 'limits'))
      for (const name of needed) {
        if (stated[name]) continue
        const names = missing.get(name) ?? new Set<string>()
        names.add(String(c['name'] ?? ''))
        missing.set(name, names)
      }
    }
    if (missing.size === 0) return undefined
    return [...missing.keys()]
      .sort()
      .map((name) => `must specify ${name} for: ${[...(missing.get(name) ?? [])].sort().join(',')}`)
      .join('; ')
  },
  usage(pod, now) {
    const usage: ResourceList = { 'count/pods': one() }
    if (!podCountsForCompute(pod, now)) return usage
    const { requests, limits } = podUsageLists(pod)
    return add(usage, computeUsage(requests, limits))
  },
}

// ---- services

const SERVICE_RESOURCES = new Set(['services', 'count/services', 'services.nodeports', 'services.loadbalancers'])

export const serviceEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'services',
  handles: (operation, subresource) => (operation === 'CREATE' || operation === 'UPDATE') && !subresource,
  matchingResources: (input) => intersection(input, SERVICE_RESOURCES),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(service) {
    const spec = specOf(service)
    const ports = objectsOf(spec['ports'])
    const usage: ResourceList = { services: one(), 'count/services': one() }
    if (spec['type'] === 'NodePort') usage['services.nodeports'] = amountOf(ports.length)
    if (spec['type'] === 'LoadBalancer') {
      // Without node ports allocated for it, only the ports that ask for one explicitly count.
      const counted = spec['allocateLoadBalancerNodePorts'] === false ? ports.filter((p) => p['nodePort']).length : ports.length
      usage['services.nodeports'] = amountOf(counted)
      usage['services.loadbalancers'] = one()
    }
    return usage
  },
}

// ---- persistent volume claims

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/'
const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage']

/** The claim's class: spec.storageClassName, else the beta annotation. */
function storageClassOf(pvc: KubeObject): string {
  const name = specOf(pvc)['storageClassName']
  if (typeof name === 'string') return name
  return pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? ''
}

export const pvcEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  handles: (operation, subresource) => (operation === 'CREATE' || operation === 'UPDATE') && !subresource,
  matchingResources: (input) =>
    input.filter(
      (n) => n === 'count/persistentvolumeclaims' || PVC_RESOURCES.includes(n) || PVC_RESOURCES.some((r) => n.endsWith(STORAGE_CLASS_SUFFIX + r)),
    ),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(pvc) {
    const usage: ResourceList = { persistentvolumeclaims: one(), 'count/persistentvolumeclaims': one() }
    const className = storageClassOf(pvc)
    if (className) usage[`${className}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = one()
    const resources = isPlainObject(specOf(pvc)['resources']) ? (specOf(pvc)['resources'] as Record<string, unknown>) : {}
    const requested = parseAmount(isPlainObject(resources['requests']) ? resources['requests']['storage'] : undefined)
    // A resize that failed keeps charging what was allocated, when that is more.
    const status = isPlainObject(pvc['status']) ? pvc['status'] : {}
    const allocated = parseAmount(isPlainObject(status['allocatedResources']) ? status['allocatedResources']['storage'] : undefined)
    const storage = allocated && (!requested || allocated.nanos > requested.nanos) ? allocated : requested
    if (storage) {
      usage['requests.storage'] = storage
      if (className) usage[`${className}${STORAGE_CLASS_SUFFIX}requests.storage`] = storage
    }
    return usage
  },
}

/** The evaluators upstream registers by default; any other resource is counted by an object count evaluator. */
export const BUILTIN_EVALUATORS: readonly QuotaEvaluator[] = [
  podEvaluator,
  serviceEvaluator,
  pvcEvaluator,
  objectCountEvaluator('', 'configmaps', 'configmaps'),
  objectCountEvaluator('', 'resourcequotas', 'resourcequotas'),
  objectCountEvaluator('', 'replicationcontrollers', 'replicationcontrollers'),
  objectCountEvaluator('', 'secrets', 'secrets'),
]

/** The evaluator of a resource: a built-in one, else an object counter. */
export function evaluatorFor(group: string, resource: string): QuotaEvaluator {
  return BUILTIN_EVALUATORS.find((e) => e.group === group && e.resource === resource) ?? objectCountEvaluator(group, resource)
}

/** Whether the quota applies to the object: it limits something the evaluator computes, and every scope selects it. */
export function quotaMatches(evaluator: QuotaEvaluator, hardNames: readonly string[], scopes: readonly ScopeSelector[], object: KubeObject): boolean {
  return evaluator.matchingResources(hardNames).length > 0 && scopes.every((s) => evaluator.matchesScope(s, object))
}

/** What a set of objects uses of `names` (each starting at zero), counting only those every scope selects. */
export function usageOf(
  evaluator: QuotaEvaluator,
  objects: readonly KubeObject[],
  names: readonly string[],
  scopes: readonly ScopeSelector[],
  now: Date,
): ResourceList {
  let used: ResourceList = Object.fromEntries(names.map((n) => [n, amountOf(0)]))
  for (const object of objects) {
    if (!scopes.every((s) => evaluator.matchesScope(s, object))) continue
    used = add(used, mask(evaluator.usage(object, now), names))
  }
  return used
}
