/**
 * What a pod asks for as a whole (upstream's resourcehelper.PodRequests and
 * PodLimits): the sum of its containers, at least what any init container
 * needs while it runs (with the sidecars started before it), sidecars
 * (restartPolicy Always) added to the sum, plus the pod's overhead.
 * Quota counts a pod as its node holds it too (`PodUsage`): a container
 * whose status reports its resources counts at the larger of what it asks
 * and what it was given, until an in-place resize is actuated, and the
 * pod-level cpu and memory, when stated, stand for the containers' sum.
 */
import { isPlainObject } from '../machinery/object.js'
import { add, addAmounts, type ResourceList, parseResourceList } from './resource-list.js'

type Obj = Record<string, unknown>
type Which = 'requests' | 'limits'

export const objectsOf = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export function containerResources(container: Obj, which: Which): ResourceList {
  const resources = container['resources']
  return isPlainObject(resources) ? parseResourceList(resources[which]) : {}
}

/** Each name at the larger of the two amounts (upstream's maxResourceList, into a copy). */
function maxOf(a: ResourceList, b: ResourceList): ResourceList {
  const out = { ...a }
  for (const [name, amount] of Object.entries(b)) {
    const mine = out[name]
    if (!mine || amount.nanos > mine.nanos) out[name] = amount
  }
  return out
}

/** What one container counts as, of its requests or of its limits. */
type ContainerCount = (container: Obj, which: Which) => ResourceList

const specOnly: ContainerCount = containerResources

/**
 * A container as its node reports it (upstream's determineContainerReqs and
 * determineContainerLimits): the larger of its spec and its status, or the
 * status alone while the pod's resize is infeasible.
 */
function withStatusResources(status: Obj): ContainerCount {
  const statuses = new Map(
    [...objectsOf(status['containerStatuses']), ...objectsOf(status['initContainerStatuses'])].map((s) => [String(s['name']), s]),
  )
  const infeasible = objectsOf(status['conditions']).find((c) => c['type'] === 'PodResizePending')?.['reason'] === 'Infeasible'
  return (container, which) => {
    const spec = containerResources(container, which)
    const own = statuses.get(String(container['name']))
    if (!own || !isPlainObject(own['resources'])) return spec
    const actual = parseResourceList(own['resources'][which])
    if (which === 'limits') return infeasible ? actual : maxOf(spec, actual)
    const allocated = parseResourceList(own['allocatedResources'])
    return maxOf(infeasible ? actual : maxOf(spec, actual), allocated)
  }
}

function aggregate(spec: Obj, which: Which, count: ContainerCount): ResourceList {
  let total: ResourceList = {}
  for (const c of objectsOf(spec['containers'])) total = add(total, count(c, which))
  let sidecars: ResourceList = {}
  let initPeak: ResourceList = {}
  for (const c of objectsOf(spec['initContainers'])) {
    let whileRunning: ResourceList
    if (c['restartPolicy'] === 'Always') {
      const own = count(c, which)
      total = add(total, own)
      sidecars = add(sidecars, own)
      whileRunning = sidecars
    } else {
      // A run-to-completion init container counts as its spec says (upstream reads no status for it).
      whileRunning = add(containerResources(c, which), sidecars)
    }
    initPeak = maxOf(initPeak, whileRunning)
  }
  return maxOf(total, initPeak)
}

/** The resources a pod may state at pod level (upstream's IsSupportedPodLevelResource). */
const POD_LEVEL_RESOURCES = ['cpu', 'memory']

function podLevel(spec: Obj, which: Which): ResourceList {
  const resources = spec['resources']
  const all = isPlainObject(resources) ? parseResourceList(resources[which]) : {}
  return Object.fromEntries(Object.entries(all).filter(([name]) => POD_LEVEL_RESOURCES.includes(name)))
}

/** Whether the pod states pod-level cpu or memory in `which`, or (for limits) anywhere. */
function statesPodLevel(spec: Obj, which: Which | 'any'): boolean {
  if (which === 'any') return statesPodLevel(spec, 'requests') || statesPodLevel(spec, 'limits')
  return Object.keys(podLevel(spec, which)).length > 0
}

function requestsOf(spec: Obj, count: ContainerCount, usePodLevel: boolean): ResourceList {
  let requests = aggregate(spec, 'requests', count)
  if (usePodLevel && statesPodLevel(spec, 'requests')) requests = { ...requests, ...podLevel(spec, 'requests') }
  return add(requests, parseResourceList(spec['overhead']))
}

/** The overhead counts only toward what is limited already: an unlimited resource stays unlimited. */
function limitsOf(spec: Obj, count: ContainerCount, usePodLevel: boolean): ResourceList {
  let limits = aggregate(spec, 'limits', count)
  if (usePodLevel && statesPodLevel(spec, 'any')) limits = { ...limits, ...podLevel(spec, 'limits') }
  const overhead = parseResourceList(spec['overhead'])
  for (const [name, limit] of Object.entries(limits)) {
    const extra = overhead[name]
    if (extra) limits[name] = addAmounts(limit, extra)
  }
  return limits
}

/** The containers' requests as their specs state them (what LimitRanger checks). */
export function podRequests(spec: Obj): ResourceList {
  return requestsOf(spec, specOnly, false)
}

/** The containers' limits as their specs state them. */
export function podLimits(spec: Obj): ResourceList {
  return limitsOf(spec, specOnly, false)
}

/** What quota charges a pod: its requests and limits as its node holds them, pod-level resources first. */
export function podUsageLists(pod: unknown): { requests: ResourceList; limits: ResourceList } {
  const spec = specOf(pod)
  const status = isPlainObject(pod) && isPlainObject(pod['status']) ? pod['status'] : {}
  const count = withStatusResources(status)
  return { requests: requestsOf(spec, count, true), limits: limitsOf(spec, count, true) }
}

export const specOf = (obj: unknown): Obj => (isPlainObject(obj) && isPlainObject(obj['spec']) ? obj['spec'] : {})
