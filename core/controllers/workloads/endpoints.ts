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
 * Endpoints of a deleted Service go with it.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { endpoints as endpointsEntry, services as serviceEntry } from '../../resources/core/services.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { selectorOf, selects, targetPort } from './service-pods.js'
import { WorkQueue } from './work-queue.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time'
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
    const labels: Record<string, string> = { ...service.metadata.labels }
    if (obj(service['spec'])['clusterIP'] === 'None') labels[HEADLESS_LABEL] = ''
    if (current && JSON.stringify(current['subsets'] ?? []) === JSON.stringify(subsets) && JSON.stringify(current.metadata.labels ?? {}) === JSON.stringify(labels)) return
    const metadata = {
      ...(current?.metadata ?? { name, namespace }),
      labels,
      annotations: { ...current?.metadata.annotations, [TRIGGER_TIME_ANNOTATION]: ctx.now().toISOString().replace(/\.\d+Z$/, 'Z') },
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
