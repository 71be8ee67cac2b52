/**
 * Container resources: their validation (names, non-negative quantities,
 * requests within limits) and the QoS class upstream derives from them.
 * Quantity syntax itself is the decoder's (schema/go-values.ts): a malformed
 * quantity never reaches here.
 */
import { type FieldError, type FieldPath, invalid } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import { isPlainObject } from '../../machinery/object.js'
import { objects } from './pod-spec-defaults.js'
import { appendAllInSteps } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue, runAtOnce } from '../../machinery/time-slice.js'

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 }
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }

/** The numeric value of a quantity (`500m` → 0.5, `1Gi` → 2^30); NaN when it is not one. */
export function quantityValue(raw: unknown): number {
  if (typeof raw === 'number') return raw
  if (typeof raw !== 'string') return Number.NaN
  // `s`: the suffix takes any rest, line breaks too, so the match never backtracks through the digits.
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(.*)$/s.exec(raw.trim())
  if (!m) return Number.NaN
  const [, number = '', suffix = ''] = m
  const scale = BINARY[suffix] ?? DECIMAL[suffix] ?? (/^[eE][-+]?\d+$/.test(suffix) ? 10 ** Number(suffix.slice(1)) : undefined)
  return scale === undefined ? Number.NaN : Number(number) * scale
}

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage'])

function isContainerResourceName(name: string): boolean {
  return name.includes('/') || STANDARD_CONTAINER_RESOURCES.has(name) || name.startsWith('hugepages-')
}

function* validateResourceList(list: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  if (!isPlainObject(list)) return []
  const errs: FieldError[] = []
  for (const name in list) {
    if (checkpointDue()) yield
    const quantity = list[name]
    const at = path.key(name)
    const nameErrs = isQualifiedName(name)
    for (const msg of nameErrs) errs.push(invalid(at, name, msg))
    if (!nameErrs.length && !isContainerResourceName(name)) errs.push(invalid(at, name, 'must be a standard resource for containers'))
    if (quantityValue(quantity) < 0) errs.push(invalid(at, String(quantity), 'must be greater than or equal to 0'))
  }
  return errs
}

/** upstream's ValidateContainerResourceRequirements, for one container's `resources`, in checkpointed steps. */
export function* validateResourcesInSteps(resources: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  if (!isPlainObject(resources)) return []
  const limits = isPlainObject(resources['limits']) ? resources['limits'] : {}
  const requests = resources['requests']
  const errs = yield* validateResourceList(limits, path.child('limits'))
  yield* appendAllInSteps(errs, yield* validateResourceList(requests, path.child('requests')))
  if (!isPlainObject(requests)) return errs
  for (const name in requests) {
    if (checkpointDue()) yield
    const quantity = requests[name]
    const limit = limits[name]
    if (limit === undefined) continue
    const [req, lim] = [quantityValue(quantity), quantityValue(limit)]
    // Extended resources (GPUs) may not be overcommitted: request and limit are equal.
    if (name.includes('/') && !name.startsWith('kubernetes.io/') && req !== lim)
      errs.push(invalid(path.child('requests'), String(quantity), `must be equal to ${name} limit of ${String(limit)}`))
    else if (req > lim)
      errs.push(invalid(path.child('requests'), String(quantity), `must be less than or equal to ${name} limit of ${String(limit)}`))
  }
  return errs
}

const QOS_RESOURCES = ['cpu', 'memory'] as const

type ResourceLists = { req: Record<string, unknown>; lim: Record<string, unknown> }

function listsOf(resources: unknown): ResourceLists {
  const r = isPlainObject(resources) ? resources : {}
  return { req: isPlainObject(r['requests']) ? r['requests'] : {}, lim: isPlainObject(r['limits']) ? r['limits'] : {} }
}

/** Pod-level resources that decide the QoS class: a cpu or memory request or limit (upstream's IsPodLevelResourcesSet). */
function podLevelResources(spec: Record<string, unknown>): ResourceLists | undefined {
  const lists = listsOf(spec['resources'])
  return QOS_RESOURCES.some((name) => name in lists.req || name in lists.lim) ? lists : undefined
}

/**
 * Guaranteed when every container limits cpu and memory and requests exactly
 * that; BestEffort when none requests or limits either; Burstable otherwise.
 * Init containers count, ephemeral ones do not; pod-level resources, when
 * the pod states them, decide alone (upstream's ComputePodQOS). In
 * checkpointed steps: a spec holds as many containers as a body allows.
 */
export function* podQOSClassInSteps(spec: Record<string, unknown>): Checkpointed<'Guaranteed' | 'Burstable' | 'BestEffort'> {
  const podLevel = podLevelResources(spec)
  const requests = new Map<string, number>()
  const limits = new Map<string, number>()
  let everyContainerLimitsAll = true
  const count = ({ req, lim }: ResourceLists): void => {
    for (const name of QOS_RESOURCES) {
      const r = quantityValue(req[name])
      if (r > 0) requests.set(name, (requests.get(name) ?? 0) + r)
      const l = quantityValue(lim[name])
      if (l > 0) limits.set(name, (limits.get(name) ?? 0) + l)
      else everyContainerLimitsAll = false
    }
  }
  if (podLevel) count(podLevel)
  else
    for (const list of ['initContainers', 'containers'])
      for (const c of objects(spec[list])) {
        count(listsOf(c['resources']))
        if (checkpointDue()) yield
      }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort'
  if (!everyContainerLimitsAll) return 'Burstable'
  for (const name of QOS_RESOURCES) if (requests.get(name) !== limits.get(name)) return 'Burstable'
  return 'Guaranteed'
}

/** The QoS class at once, for a spec of ordinary size (see podQOSClassInSteps). */
export function podQOSClass(spec: Record<string, unknown>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  return runAtOnce(podQOSClassInSteps(spec))
}
