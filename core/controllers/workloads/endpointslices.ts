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
import { sameJson } from '../../machinery/same-json.js'

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
    // Slices this controller created and its informer has not shown yet (see awaitingCreated).
    const created = new Map<string, Set<string>>()
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        if (await awaitingCreated(ctx, key, created.get(key), slices.byIndex('service', key))) return queue.addAfter(key, 10)
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
    const sliceChanged = (s: KubeObject): void => {
      if (s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) queue.add(`${s.metadata.namespace ?? ''}/${s.metadata.labels[SERVICE_NAME_LABEL] ?? ''}`)
    }
    const stops = [
      services.addHandlers({ onAdd: (s) => queue.add(keyOf(s)), onUpdate: (_, s) => queue.add(keyOf(s)), onDelete: (s) => queue.add(keyOf(s)) }),
      podInformer.addHandlers({ onAdd: (p) => podChanged(p), onUpdate: (before, after) => podChanged(before, after), onDelete: (p) => podChanged(p) }),
      // A slice of ours deleted or changed by someone else is put back, as upstream's controller follows its slices.
      slices.addHandlers({ onUpdate: (before, after) => (sliceChanged(before), sliceChanged(after)), onDelete: sliceChanged }),
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
  const spare = [...existing]
  const wanted: { addressType: string; endpoints: Obj[]; ports: Obj[]; current?: KubeObject }[] = []
  for (const [addressType, group] of byFamily) {
    const ports = group.ports ?? []
    // An endpoint stays in the slice that holds it, as upstream's reconciler keeps them: one pod coming or going
    // rewrites one slice, not every slice of the Service.
    const fresh = new Map(group.endpoints.map((e) => [endpointId(e), e]))
    for (const current of spare.filter((s) => s['addressType'] === addressType && sameJson(s['ports'] ?? [], ports))) {
      const endpoints = list(current['endpoints']).flatMap((e) => {
        const now = fresh.get(endpointId(e))
        fresh.delete(endpointId(e))
        return now ? [now] : []
      })
      if (endpoints.length === 0) continue
      spare.splice(spare.indexOf(current), 1)
      wanted.push({ addressType, endpoints, ports, current })
    }
    // New endpoints fill the room the kept slices have, then slices of their own, in pod name order.
    const added = [...fresh.values()].sort((a, b) => (String(obj(a['targetRef'])['name']) < String(obj(b['targetRef'])['name']) ? -1 : 1))
    let next = 0
    for (const slice of wanted) {
      if (slice.addressType !== addressType) continue
      while (slice.endpoints.length < MAX_ENDPOINTS_PER_SLICE && next < added.length) slice.endpoints.push(added[next++]!)
    }
    for (; next < added.length; next += MAX_ENDPOINTS_PER_SLICE) wanted.push({ addressType, endpoints: added.slice(next, next + MAX_ENDPOINTS_PER_SLICE), ports })
  }
  // A Service with no endpoints still has one (empty) slice, as upstream keeps a placeholder.
  if (!wanted.length) wanted.push({ addressType: 'IPv4', endpoints: [], ports: [] })
  const labels = { ...service.metadata.labels, [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY }
  const owner = { apiVersion: 'v1', kind: 'Service', name, uid: service.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }
  const createdNames: string[] = []
  for (const slice of wanted) {
    // A slice no endpoint is kept in may still serve one of another shape (new ports) rather than be deleted and made anew.
    const reuse = slice.current ? -1 : spare.findIndex((s) => s['addressType'] === slice.addressType)
    const current = slice.current ?? (reuse >= 0 ? spare.splice(reuse, 1)[0] : undefined)
    const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: slice.addressType, endpoints: slice.endpoints, ports: slice.ports }
    if (current) {
      // As values: the stored objects keep the API's field order, not the order they are built in here.
      const same = sameJson([current['endpoints'] ?? [], current['ports'] ?? [], current.metadata.labels ?? {}], [slice.endpoints, slice.ports, labels])
      if (!same) await ctx.client.update(sliceEntry, namespace, { ...current, ...body, metadata: { ...current.metadata, labels } })
    } else {
      const made = await ctx.client.create(sliceEntry, namespace, { ...body, metadata: { generateName: `${name}-`, namespace, labels, ownerReferences: [owner] } })
      createdNames.push(made.metadata.name ?? '')
    }
  }
  await Promise.all(spare.map((s) => ctx.client.delete(sliceEntry, namespace, s.metadata.name ?? '').catch(ignoreGone)))
  return createdNames
}

/** What tells an endpoint apart: its pod and its address. */
function endpointId(endpoint: Obj): string {
  const pod = obj(endpoint['targetRef'])
  const addresses = Array.isArray(endpoint['addresses']) ? endpoint['addresses'] : []
  return `${String(pod['uid'] ?? pod['name'])}/${String(addresses[0])}`
}

/**
 * Whether slices a controller created under `key` (`namespace/service`) are still to show in its informer: until
 * then a sync would create them again. One deleted before the informer showed it never will; the server is asked.
 */
export async function awaitingCreated(ctx: ControllerContext, key: string, created: ReadonlySet<string> | undefined, shown: readonly KubeObject[]): Promise<boolean> {
  const names = new Set(shown.map((s) => s.metadata.name ?? ''))
  const unseen = [...(created ?? [])].filter((n) => !names.has(n))
  const namespace = key.split('/')[0] ?? ''
  const exists = (name: string): Promise<boolean> => ctx.client.get(sliceEntry, namespace, name).then(() => true, (err: unknown) => (ignoreGone(err), false))
  return (await Promise.all(unseen.map(exists))).some(Boolean)
}

function ignoreGone(err: unknown): void {
  if (!hasStatusCode(err, 404)) throw err
}
