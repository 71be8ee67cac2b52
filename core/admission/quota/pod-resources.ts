/**
 * What a pod asks for as a whole (upstream's resourcehelper.PodRequests and
 * PodLimits): the sum of its containers, at least what any init container
 * needs while it runs (with the sidecars started before it), sidecars
 * (restartPolicy Always) added to the sum, plus the pod's overhead.
 */
import { isPlainObject } from '../../machinery/object.js'
import { add, addAmounts, type ResourceList, parseResourceList } from './resource-list.js'

type Obj = Record<string, unknown>

export const objectsOf = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export function containerResources(container: Obj, which: 'requests' | 'limits'): ResourceList {
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

function aggregate(spec: Obj, which: 'requests' | 'limits'): ResourceList {
  let total: ResourceList = {}
  for (const c of objectsOf(spec['containers'])) total = add(total, containerResources(c, which))
  let sidecars: ResourceList = {}
  let initPeak: ResourceList = {}
  for (const c of objectsOf(spec['initContainers'])) {
    const own = containerResources(c, which)
    let whileRunning: ResourceList
    if (c['restartPolicy'] === 'Always') {
      total = add(total, own)
      sidecars = add(sidecars, own)
      whileRunning = sidecars
    } else {
      whileRunning = add(own, sidecars)
    }
    initPeak = maxOf(initPeak, whileRunning)
  }
  return maxOf(total, initPeak)
}

export function podRequests(spec: Obj): ResourceList {
  const requests = aggregate(spec, 'requests')
  return add(requests, parseResourceList(spec['overhead']))
}

/** The overhead counts only toward what is limited already: an unlimited resource stays unlimited. */
export function podLimits(spec: Obj): ResourceList {
  const limits = aggregate(spec, 'limits')
  const overhead = parseResourceList(spec['overhead'])
  for (const [name, limit] of Object.entries(limits)) {
    const extra = overhead[name]
    if (extra) limits[name] = addAmounts(limit, extra)
  }
  return limits
}

export const specOf = (obj: unknown): Obj => (isPlainObject(obj) && isPlainObject(obj['spec']) ? obj['spec'] : {})
