/**
 * The EndpointSlice controller (upstream's pkg/controller/endpointslice),
 * in its plain form: for each Service with a selector, slices named
 * `<service>-<random>` (generateName), labelled with the Service's name and
 * `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`,
 * owned by the Service, one per address family the pods have, at most 100
 * endpoints each. An endpoint is a pod with an IP: its conditions (ready,
 * serving, terminating), node, zone (the node's topology label) and target
 * reference; the ports are the Service's resolved against the pods. Pods
 * whose ports resolve differently are not split into slices of their own
 * (upstream does): the first pod's resolution names the slice's ports.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import { nodes as nodeEntry } from '../../resources/core/nodes.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { services as serviceEntry } from '../../resources/core/services.js'
import { endpointSlices as sliceEntry } from '../../resources/groups/discovery.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { selectorOf, selects, targetPort } from './service-pods.js'
import { WorkQueue } from './work-queue.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name'
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by'
export const MANAGED_BY = 'endpointslice-controller.k8s.io'
const MAX_ENDPOINTS_PER_SLICE = 100
const ZONE_LABEL = 'topology.kubernetes.io/zone'

export const endpointSliceController: WorkloadController = {
  name: 'endpointslice',
  serviceAccount: 'endpointslice-controller',
  onByDefault: true,
  async start(ctx) {
    const services = ctx.informers.informer(serviceEntry)
    const podInformer = ctx.informers.informer(podEntry)
    const slices = ctx.informers.informer(sliceEntry)
    const nodeInformer = ctx.informers.informer(nodeEntry)
    slices.addIndex('service', (s) => (s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY ? [`${s.metadata.namespace ?? ''}/${s.metadata.labels?.[SERVICE_NAME_LABEL] ?? ''}`] : []))
    // Slices this controller created and its informer has not shown yet: until then a sync would create them again.
    const created = new Map<string, Set<string>>()
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        const shown = new Set(slices.byIndex('service', key).map((s) => s.metadata.name ?? ''))
        const unseen = [...(created.get(key) ?? [])].filter((n) => !shown.has(n))
        if (unseen.length) return queue.addAfter(key, 10)
        created.delete(key)
        const names = await sync(ctx, key, { services, pods: podInformer, slices, nodes: nodeInformer })
        if (names.length) created.set(key, new Set(names))
      },
      { logger: ctx.logger, name: 'endpointslice' },
    )
    await Promise.all([services.synced, podInformer.synced, slices.synced, nodeInformer.synced])
    const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`
    const podChanged = (...versions: KubeObject[]): void => {
      for (const service of services.list(versions[0]?.metadata.namespace ?? '')) if (versions.some((p) => selects(service, p))) queue.add(keyOf(service))
    }
    const stops = [
      services.addHandlers({ onAdd: (s) => queue.add(keyOf(s)), onUpdate: (_, s) => queue.add(keyOf(s)), onDelete: (s) => queue.add(keyOf(s)) }),
      podInformer.addHandlers({ onAdd: (p) => podChanged(p), onUpdate: (before, after) => podChanged(before, after), onDelete: (p) => podChanged(p) }),
    ]
    return () => {
      stops.forEach((stop) => stop())
      queue.stop()
    }
  },
}

function resolvedPorts(service: KubeObject, pod: KubeObject): Obj[] {
  return list(obj(service['spec'])['ports']).flatMap((port) => {
    const number = targetPort(pod, port)
    return number === undefined ? [] : [{ name: port['name'] ?? '', port: number, protocol: port['protocol'] ?? 'TCP', ...(port['appProtocol'] ? { appProtocol: port['appProtocol'] } : {}) }]
  })
}

interface Readers {
  services: { get(ns: string, name: string): KubeObject | undefined }
  pods: { list(ns: string): KubeObject[] }
  slices: { byIndex(index: string, key: string): KubeObject[] }
  nodes: { get(ns: string, name: string): KubeObject | undefined }
}

/** Brings the Service's slices in line; answers the names of the slices it created. */
async function sync(ctx: ControllerContext, key: string, { services, pods, slices, nodes }: Readers): Promise<string[]> {
  const [namespace = '', name = ''] = key.split('/')
  const service = services.get(namespace, name)
  const existing = slices.byIndex('service', key)
  // A Service gone takes its slices through their owner reference (the garbage collector); one without a selector has none of ours.
  if (!service || !selectorOf(service)) {
    await Promise.all(existing.map((s) => ctx.client.delete(sliceEntry, namespace, s.metadata.name ?? '').catch(ignoreGone)))
    return []
  }
  const selected = pods.list(namespace).filter((p) => selects(service, p) && !['Succeeded', 'Failed'].includes(String(obj(p['status'])['phase'])))
  const publishNotReady = obj(service['spec'])['publishNotReadyAddresses'] === true
  const byFamily = new Map<'IPv4' | 'IPv6', { endpoints: Obj[]; ports: Obj[] | undefined }>()
  for (const pod of selected) {
    const ips = list(obj(pod['status'])['podIPs']).map((p) => String(p['ip']))
    if (!ips.length && typeof obj(pod['status'])['podIP'] === 'string') ips.push(String(obj(pod['status'])['podIP']))
    const terminating = Boolean(pod.metadata.deletionTimestamp)
    const ready = list(obj(pod['status'])['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True')
    const nodeName = obj(pod['spec'])['nodeName']
    const zone = typeof nodeName === 'string' ? nodes.get('', nodeName)?.metadata.labels?.[ZONE_LABEL] : undefined
    for (const ip of ips) {
      const family = ip.includes(':') ? 'IPv6' : 'IPv4'
      let group = byFamily.get(family)
      if (!group) byFamily.set(family, (group = { endpoints: [], ports: undefined }))
      group.ports ??= resolvedPorts(service, pod)
      group.endpoints.push({
        addresses: [ip],
        conditions: { ready: publishNotReady || (ready && !terminating), serving: ready, terminating },
        ...(typeof nodeName === 'string' && nodeName ? { nodeName } : {}),
        ...(zone ? { zone } : {}),
        targetRef: { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid },
      })
    }
  }
  const wanted: { addressType: string; endpoints: Obj[]; ports: Obj[] }[] = []
  for (const [addressType, group] of byFamily) {
    group.endpoints.sort((a, b) => (String(obj(a['targetRef'])['name']) < String(obj(b['targetRef'])['name']) ? -1 : 1))
    for (let i = 0; i < group.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) wanted.push({ addressType, endpoints: group.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE), ports: group.ports ?? [] })
  }
  // A Service with no endpoints still has one (empty) slice, as upstream keeps a placeholder.
  if (!wanted.length) wanted.push({ addressType: 'IPv4', endpoints: [], ports: [] })
  const labels = { ...service.metadata.labels, [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY }
  const owner = { apiVersion: 'v1', kind: 'Service', name, uid: service.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }
  const spare = [...existing]
  const createdNames: string[] = []
  for (const slice of wanted) {
    const reuse = spare.findIndex((s) => s['addressType'] === slice.addressType)
    const current = reuse >= 0 ? spare.splice(reuse, 1)[0] : undefined
    const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: slice.addressType, endpoints: slice.endpoints, ports: slice.ports }
    if (current) {
      const same = JSON.stringify([current['endpoints'] ?? [], current['ports'] ?? [], current.metadata.labels]) === JSON.stringify([slice.endpoints, slice.ports, labels])
      if (!same) await ctx.client.update(sliceEntry, namespace, { ...current, ...body, metadata: { ...current.metadata, labels } })
    } else {
      const made = await ctx.client.create(sliceEntry, namespace, { ...body, metadata: { generateName: `${name}-`, namespace, labels, ownerReferences: [owner] } })
      createdNames.push(made.metadata.name ?? '')
    }
  }
  await Promise.all(spare.map((s) => ctx.client.delete(sliceEntry, namespace, s.metadata.name ?? '').catch(ignoreGone)))
  return createdNames
}

function ignoreGone(err: unknown): void {
  if (!hasStatusCode(err, 404)) throw err
}
