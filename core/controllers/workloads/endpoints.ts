/**
 * The endpoints controller (upstream's pkg/controller/endpoint): for each
 * Service with a selector, the v1 Endpoints of the same name list the IPs
 * of the pods it selects, ready pods under `addresses` and the others under
 * `notReadyAddresses` (all under `addresses` with
 * publishNotReadyAddresses), with the Service's ports resolved against each
 * pod (a named targetPort is looked up in the pod's containers; a pod
 * without it is left out of that port's subset). Pods without an IP,
 * finished pods and pods being deleted are left out. A Service without a
 * selector is left alone (its Endpoints are its owner's to write), and the
 * Endpoints of a deleted Service go with it. Past 1000 addresses the list is
 * cut and marked `endpoints.kubernetes.io/over-capacity: truncated`, as
 * upstream's (EndpointSlices carry them all).
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { endpoints as endpointsEntry, services as serviceEntry } from '../../resources/core/services.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { selectorOf, selects, targetPort } from './service-pods.js'
import { WorkQueue } from './work-queue.js'
import { sameJson } from '../../machinery/same-json.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time'
const OVER_CAPACITY_ANNOTATION = 'endpoints.kubernetes.io/over-capacity'
/** The most addresses an Endpoints object holds (upstream's maxCapacity); EndpointSlices carry the rest. */
export const MAX_ENDPOINTS_ADDRESSES = 1000
const HEADLESS_LABEL = 'service.kubernetes.io/headless'

export const endpointController: WorkloadController = {
  name: 'endpoint',
  serviceAccount: 'endpoint-controller',
  onByDefault: true,
  async start(ctx) {
    const serviceInformer = ctx.informers.informer(serviceEntry)
    const podInformer = ctx.informers.informer(podEntry)
    const endpointsInformer = ctx.informers.informer(endpointsEntry)
    const queue = new WorkQueue((key) => sync(ctx, key, serviceInformer, podInformer, endpointsInformer), { logger: ctx.logger, name: 'endpoint' })
    await Promise.all([serviceInformer.synced, podInformer.synced, endpointsInformer.synced])
    const serviceKey = (s: KubeObject): string => `${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`
    // A pod change touches the services of its namespace that select it (before or after the change).
    const podChanged = (...versions: KubeObject[]): void => {
      for (const service of serviceInformer.list(versions[0]?.metadata.namespace ?? '')) {
        if (versions.some((p) => selects(service, p))) queue.add(serviceKey(service))
      }
    }
    const stops = [
      serviceInformer.addHandlers({ onAdd: (s) => queue.add(serviceKey(s)), onUpdate: (_, s) => queue.add(serviceKey(s)), onDelete: (s) => queue.add(serviceKey(s)) }),
      podInformer.addHandlers({ onAdd: (p) => podChanged(p), onUpdate: (before, after) => podChanged(before, after), onDelete: (p) => podChanged(p) }),
      // Deleted Endpoints of a selector Service are made again. Like upstream's, the controller does not follow other
      // changes to Endpoints: Endpoints that no Service owns are someone's own, and they are left to them.
      endpointsInformer.addHandlers({ onDelete: (e) => queue.add(serviceKey(e)) }),
    ]
    return () => {
      stops.forEach((stop) => stop())
      queue.stop()
    }
  },
}

const isReady = (pod: KubeObject): boolean => list(obj(pod['status'])['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True')

/** The Endpoints' subsets: addresses grouped by the ports they resolved to, in IP order, as upstream repacks them. */
export function subsetsFor(service: KubeObject, selected: readonly KubeObject[]): Obj[] {
  const spec = obj(service['spec'])
  const publishNotReady = spec['publishNotReadyAddresses'] === true
  const groups = new Map<string, { ports: Obj[]; addresses: Obj[]; notReadyAddresses: Obj[] }>()
  for (const pod of selected) {
    const status = obj(pod['status'])
    const ip = status['podIP']
    if (typeof ip !== 'string' || !ip || pod.metadata.deletionTimestamp || ['Succeeded', 'Failed'].includes(String(status['phase']))) continue
    const ports: Obj[] = []
    for (const port of list(spec['ports'])) {
      const number = targetPort(pod, port)
      if (number === undefined) continue
      ports.push({ ...(port['name'] ? { name: port['name'] } : {}), port: number, protocol: port['protocol'] ?? 'TCP', ...(port['appProtocol'] ? { appProtocol: port['appProtocol'] } : {}) })
    }
    if (list(spec['ports']).length > 0 && ports.length === 0) continue
    const podSpec = obj(pod['spec'])
    const address: Obj = {
      ip,
      ...(podSpec['hostname'] && podSpec['subdomain'] === service.metadata.name ? { hostname: podSpec['hostname'] } : {}),
      ...(podSpec['nodeName'] ? { nodeName: podSpec['nodeName'] } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    }
    const key = JSON.stringify(ports)
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { ports, addresses: [], notReadyAddresses: [] }))
    ;(publishNotReady || isReady(pod) ? group.addresses : group.notReadyAddresses).push(address)
  }
  const byIp = (a: Obj, b: Obj): number => (String(a['ip']) < String(b['ip']) ? -1 : String(a['ip']) > String(b['ip']) ? 1 : 0)
  return [...groups.values()].map((g) => ({
    ...(g.addresses.length ? { addresses: g.addresses.sort(byIp) } : {}),
    ...(g.notReadyAddresses.length ? { notReadyAddresses: g.notReadyAddresses.sort(byIp) } : {}),
    ...(g.ports.length ? { ports: g.ports } : {}),
  }))
}

/**
 * Cuts the subsets down to MAX_ENDPOINTS_ADDRESSES addresses as upstream's
 * truncateEndpoints does: ready addresses kept before not-ready ones, the
 * room shared among the subsets by their share of what is cut, rounded up
 * (so the last may get less). Answers whether anything was cut.
 */
export function truncateToCapacity(subsets: Obj[]): boolean {
  const count = (subset: Obj, field: string): number => list(subset[field]).length
  const ready = subsets.reduce((n, s) => n + count(s, 'addresses'), 0)
  const notReady = subsets.reduce((n, s) => n + count(s, 'notReadyAddresses'), 0)
  if (ready + notReady <= MAX_ENDPOINTS_ADDRESSES) return false
  const cutReady = ready > MAX_ENDPOINTS_ADDRESSES
  const room = cutReady ? MAX_ENDPOINTS_ADDRESSES : MAX_ENDPOINTS_ADDRESSES - ready
  const total = cutReady ? ready : notReady
  let left = room
  for (const subset of subsets) {
    const field = cutReady ? 'addresses' : 'notReadyAddresses'
    const kept = Math.min(Math.ceil((count(subset, field) / total) * room), left)
    const addresses = list(subset[field]).slice(0, kept)
    if (addresses.length) subset[field] = addresses
    else delete subset[field]
    if (cutReady) delete subset['notReadyAddresses']
    left -= addresses.length
  }
  return true
}

async function sync(
  ctx: ControllerContext,
  key: string,
  services: { get(ns: string, name: string): KubeObject | undefined },
  pods: { list(ns: string): KubeObject[] },
  endpoints: { get(ns: string, name: string): KubeObject | undefined },
): Promise<void> {
  const [namespace = '', name = ''] = key.split('/')
  const service = services.get(namespace, name)
  const current = endpoints.get(namespace, name)
  try {
    if (!service) {
      if (current) await ctx.client.delete(endpointsEntry, namespace, name)
      return
    }
    if (!selectorOf(service)) return
    const subsets = subsetsFor(
      service,
      pods.list(namespace).filter((p) => selects(service, p)),
    )
    const truncated = truncateToCapacity(subsets)
    const labels: Record<string, string> = { ...service.metadata.labels }
    if (obj(service['spec'])['clusterIP'] === 'None') labels[HEADLESS_LABEL] = ''
    const wasTruncated = current?.metadata.annotations?.[OVER_CAPACITY_ANNOTATION] === 'truncated'
    if (
      current &&
      truncated === wasTruncated &&
      sameJson(current['subsets'] ?? [], subsets) &&
      sameJson(current.metadata.labels ?? {}, labels)
    )
      return
    const { [OVER_CAPACITY_ANNOTATION]: _over, ...annotations } = current?.metadata.annotations ?? {}
    const metadata = {
      ...(current?.metadata ?? { name, namespace }),
      labels,
      annotations: {
        ...annotations,
        [TRIGGER_TIME_ANNOTATION]: ctx.now().toISOString().replace(/\.\d+Z$/, 'Z'),
        ...(truncated ? { [OVER_CAPACITY_ANNOTATION]: 'truncated' } : {}),
      },
    }
    const body: KubeObject = { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets }
    if (current) await ctx.client.update(endpointsEntry, namespace, body)
    else await ctx.client.create(endpointsEntry, namespace, body)
  } catch (err) {
    // Gone meanwhile, or written by another: the next event brings the key back; a conflict is tried again.
    if (hasStatusCode(err, 404)) return
    throw err
  }
}
