/**
 * What a LimitRange asks of a pod or claim (upstream's limitranger
 * admission.go): the default limits and requests it gives containers that
 * state none, and the min, max and maxLimitRequestRatio per Container, Pod
 * and PersistentVolumeClaim, with upstream's messages.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { containerResources, objectsOf, podLimits, podRequests, specOf } from '../../quota/pod-resources.js'
import { type Amount, formatAmount, parseResourceList, type ResourceList } from '../../quota/resource-list.js'

type Obj = Record<string, unknown>

export const limitItemsOf = (limitRange: KubeObject): Obj[] => objectsOf(specOf(limitRange)['limits'])

/** The defaults of the Container items (a later item's value wins, as upstream reads them into one list). */
export function containerDefaults(limitRange: KubeObject): { limits: Obj; requests: Obj } {
  const limits: Obj = {}
  const requests: Obj = {}
  for (const item of limitItemsOf(limitRange)) {
    if (item['type'] !== 'Container') continue
    if (isPlainObject(item['default'])) Object.assign(limits, item['default'])
    if (isPlainObject(item['defaultRequest'])) Object.assign(requests, item['defaultRequest'])
  }
  return { limits, requests }
}

/** Sets what a container leaves out; returns the note upstream records in the pod's annotation, if anything was set. */
function defaultContainer(container: Obj, defaults: { limits: Obj; requests: Obj }, what: string): string[] {
  const resources = isPlainObject(container['resources']) ? container['resources'] : (container['resources'] = {})
  const limits = isPlainObject(resources['limits']) ? resources['limits'] : {}
  const requests = isPlainObject(resources['requests']) ? resources['requests'] : {}
  const setLimits = Object.keys(defaults.limits).filter((k) => limits[k] === undefined)
  const setRequests = Object.keys(defaults.requests).filter((k) => requests[k] === undefined)
  for (const k of setLimits) limits[k] = defaults.limits[k]
  for (const k of setRequests) requests[k] = defaults.requests[k]
  if (Object.keys(limits).length) resources['limits'] = limits
  if (Object.keys(requests).length) resources['requests'] = requests
  const name = String(container['name'] ?? '')
  const notes: string[] = []
  if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${name}`)
  if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${name}`)
  return notes
}

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger'

/** Gives every container the limit range's defaults; notes what was set in the pod's annotation, as upstream. */
export function applyContainerDefaults(pod: KubeObject, limitRange: KubeObject): void {
  const defaults = containerDefaults(limitRange)
  if (!Object.keys(defaults.limits).length && !Object.keys(defaults.requests).length) return
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const notes = [
    ...objectsOf(spec['containers']).flatMap((c) => defaultContainer(c, defaults, 'container')),
    ...objectsOf(spec['initContainers']).flatMap((c) => defaultContainer(c, defaults, 'init container')),
  ]
  if (notes.length) pod.metadata.annotations = { ...pod.metadata.annotations, [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` }
}

/** What upstream compares: milli-units when all three fit, else whole units (rounded up). */
function compared(...amounts: (Amount | undefined)[]): bigint[] {
  return amounts.map((a) => (a ? (a.nanos + 999_999n) / 1_000_000n : 0n))
}

const text = (amount: Amount | undefined): string => (amount ? formatAmount(amount) : '')

function minConstraint(type: string, name: string, enforced: Amount, requests: ResourceList, limits: ResourceList): string | undefined {
  const [req, lim, min] = compared(requests[name], limits[name], enforced)
  const shown = formatAmount(enforced)
  if (!requests[name]) return `minimum ${name} usage per ${type} is ${shown}.  No request is specified`
  if ((req as bigint) < (min as bigint)) return `minimum ${name} usage per ${type} is ${shown}, but request is ${text(requests[name])}`
  if (limits[name] && (lim as bigint) < (min as bigint)) return `minimum ${name} usage per ${type} is ${shown}, but limit is ${text(limits[name])}`
  return undefined
}

function maxConstraint(type: string, name: string, enforced: Amount, requests: ResourceList, limits: ResourceList): string | undefined {
  const [req, lim, max] = compared(requests[name], limits[name], enforced)
  const shown = formatAmount(enforced)
  if (!limits[name]) return `maximum ${name} usage per ${type} is ${shown}.  No limit is specified`
  if ((lim as bigint) > (max as bigint)) return `maximum ${name} usage per ${type} is ${shown}, but limit is ${text(limits[name])}`
  if (requests[name] && (req as bigint) > (max as bigint)) return `maximum ${name} usage per ${type} is ${shown}, but request is ${text(requests[name])}`
  return undefined
}

function maxRequestConstraint(type: string, name: string, enforced: Amount, requests: ResourceList): string | undefined {
  const [req, max] = compared(requests[name], enforced)
  const shown = formatAmount(enforced)
  if (!requests[name]) return `maximum ${name} usage per ${type} is ${shown}.  No request is specified`
  if ((req as bigint) > (max as bigint)) return `maximum ${name} usage per ${type} is ${shown}, but request is ${text(requests[name])}`
  return undefined
}

function ratioConstraint(type: string, name: string, enforced: Amount, requests: ResourceList, limits: ResourceList): string | undefined {
  const [req, lim] = compared(requests[name], limits[name])
  const shown = formatAmount(enforced)
  if (!requests[name] || req === 0n) return `${name} max limit to request ratio per ${type} is ${shown}, but no request is specified or request is 0`
  if (!limits[name] || lim === 0n) return `${name} max limit to request ratio per ${type} is ${shown}, but no limit is specified or limit is 0`
  const ratio = Number(lim) / Number(req)
  if (ratio * 1e9 > Number(enforced.nanos)) return `${name} max limit to request ratio per ${type} is ${shown}, but provided ratio is ${ratio.toFixed(6)}`
  return undefined
}

function checkItem(item: Obj, requests: ResourceList, limits: ResourceList): string[] {
  const type = String(item['type'] ?? '')
  const errs: (string | undefined)[] = []
  for (const [name, value] of Object.entries(parseResourceList(item['min']))) errs.push(minConstraint(type, name, value, requests, limits))
  for (const [name, value] of Object.entries(parseResourceList(item['max']))) errs.push(maxConstraint(type, name, value, requests, limits))
  for (const [name, value] of Object.entries(parseResourceList(item['maxLimitRequestRatio'])))
    errs.push(ratioConstraint(type, name, value, requests, limits))
  return errs.filter((e): e is string => e !== undefined)
}

/** Every violation of the limit range by the pod (per container for Container items, the whole pod for Pod items). */
export function podViolations(limitRange: KubeObject, pod: KubeObject): string[] {
  const spec = specOf(pod)
  const containers = [...objectsOf(spec['containers']), ...objectsOf(spec['initContainers'])]
  return limitItemsOf(limitRange).flatMap((item) => {
    if (item['type'] === 'Container')
      return containers.flatMap((c) => checkItem(item, containerResources(c, 'requests'), containerResources(c, 'limits')))
    if (item['type'] === 'Pod') return checkItem(item, podRequests(spec), podLimits(spec))
    return []
  })
}

/** Every violation by a claim: min against its requests, max against what it requests (its limits are no input). */
export function claimViolations(limitRange: KubeObject, pvc: KubeObject): string[] {
  const resources = specOf(pvc)['resources']
  const requests = parseResourceList(isPlainObject(resources) ? resources['requests'] : undefined)
  return limitItemsOf(limitRange).flatMap((item) => {
    if (item['type'] !== 'PersistentVolumeClaim') return []
    const errs: (string | undefined)[] = []
    for (const [name, value] of Object.entries(parseResourceList(item['min']))) errs.push(minConstraint('PersistentVolumeClaim', name, value, requests, {}))
    for (const [name, value] of Object.entries(parseResourceList(item['max']))) errs.push(maxRequestConstraint('PersistentVolumeClaim', name, value, requests))
    return errs.filter((e): e is string => e !== undefined)
  })
}

/** Go's aggregate error text: one error alone, several in brackets. */
export const aggregate = (errs: readonly string[]): string => (errs.length === 1 ? (errs[0] as string) : `[${errs.join(', ')}]`)
