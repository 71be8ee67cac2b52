/**
 * The EndpointSlice mirroring controller (upstream's
 * pkg/controller/endpointslicemirroring): the Endpoints of a Service without
 * a selector are written by hand, and this controller mirrors them into
 * EndpointSlices so that readers of slices (kube-proxy, DNS) see them too.
 *
 * For each such Endpoints (unless labelled
 * `endpointslice.kubernetes.io/skip-mirror: "true"` or holding a leader
 * election record), one slice per set of subset ports and address family,
 * named `<endpoints>-<random>`, owned by the Endpoints, labelled with its
 * labels plus `kubernetes.io/service-name` and managed-by
 * `endpointslicemirroring-controller.k8s.io`, annotated with its annotations
 * but the trigger time and kubectl's last-applied configuration. Ready
 * addresses are mirrored ready, not-ready ones not, at most 1000 per subset;
 * the slices go when the Endpoints or the Service goes, or the Service gets
 * a selector (its slices are then the EndpointSlice controller's).
 */
import { fieldPath } from '../../machinery/field.js'
import { formatIP, parseIP } from '../../machinery/ip.js'
import { nonSpecialIPErrors } from '../../resources/core/endpoints-validation.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import { endpoints as endpointsEntry, services as serviceEntry } from '../../resources/core/services.js'
import { endpointSlices as sliceEntry } from '../../resources/groups/discovery.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { awaitingCreated, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './endpointslices.js'
import { selectorOf } from './service-pods.js'
import { WorkQueue } from './work-queue.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export const MIRRORED_BY = 'endpointslicemirroring-controller.k8s.io'
/** Where the checked address would sit in a slice; only whether there are errors is read. */
const SOME_PATH = fieldPath('endpoints').index(0).child('addresses').index(0)
const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror'
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader'
/** Annotations of the Endpoints not copied onto its slices. */
const UNMIRRORED_ANNOTATIONS = ['endpoints.kubernetes.io/last-change-trigger-time', 'kubectl.kubernetes.io/last-applied-configuration']
/** Upstream's default `--mirroring-max-endpoints-per-subset`. */
const MAX_ENDPOINTS_PER_SUBSET = 1000

export const endpointSliceMirroringController: WorkloadController = {
  name: 'endpointslicemirroring',
  serviceAccount: 'endpointslicemirroring-controller',
  eventComponent: 'endpoint-slice-mirroring-controller',
  onByDefault: true,
  async start(ctx) {
    const endpointsInformer = ctx.informers.informer(endpointsEntry)
    const services = ctx.informers.informer(serviceEntry)
    const slices = ctx.informers.informer(sliceEntry)
    slices.addIndex('mirrored', (s) => (s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORED_BY ? [keyOf(s, s.metadata.labels[SERVICE_NAME_LABEL] ?? '')] : []))
    // Slices this controller created and its informer has not shown yet (see awaitingCreated).
    const created = new Map<string, Set<string>>()
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        if (await awaitingCreated(ctx, key, created.get(key), slices.byIndex('mirrored', key))) return queue.addAfter(key, 10)
        created.delete(key)
        const names = await sync(ctx, key, { endpoints: endpointsInformer, services, slices })
        if (names.length) created.set(key, new Set(names))
      },
      { logger: ctx.logger, name: 'endpointslicemirroring' },
    )
    await Promise.all([endpointsInformer.synced, services.synced, slices.synced])
    const add = (o: KubeObject): void => queue.add(keyOf(o))
    const mirroredSlice = (s: KubeObject): void => {
      if (s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORED_BY) queue.add(keyOf(s, s.metadata.labels[SERVICE_NAME_LABEL] ?? ''))
    }
    const stops = [
      endpointsInformer.addHandlers({
        onAdd: (e) => shouldMirror(e) && add(e),
        onUpdate: (before, after) => (shouldMirror(before) || shouldMirror(after)) && add(after),
        onDelete: (e) => shouldMirror(e) && add(e),
      }),
      // Only a selector coming or going changes what is mirrored.
      services.addHandlers({
        onAdd: (s) => !selectorOf(s) && add(s),
        onUpdate: (before, after) => !selectorOf(before) !== !selectorOf(after) && add(after),
        onDelete: (s) => !selectorOf(s) && add(s),
      }),
      // A mirrored slice changed or deleted by someone else is put back (the controller's own writes sync to no change).
      slices.addHandlers({ onAdd: mirroredSlice, onUpdate: (before, after) => (mirroredSlice(before), mirroredSlice(after)), onDelete: mirroredSlice }),
    ]
    return () => {
      stops.forEach((stop) => stop())
      queue.stop()
    }
  },
}

const keyOf = (o: KubeObject, name = o.metadata.name ?? ''): string => `${o.metadata.namespace ?? ''}/${name}`

function shouldMirror(endpoints: KubeObject): boolean {
  return endpoints.metadata.labels?.[SKIP_MIRROR_LABEL] !== 'true' && endpoints.metadata.annotations?.[LEADER_ANNOTATION] === undefined
}

interface Readers {
  endpoints: { get(ns: string, name: string): KubeObject | undefined }
  services: { get(ns: string, name: string): KubeObject | undefined }
  slices: { byIndex(index: string, key: string): KubeObject[] }
}

interface Group {
  addressType: 'IPv4' | 'IPv6'
  ports: Obj[]
  endpoints: Map<string, Obj>
}

/** Brings the mirrored slices of one Endpoints in line; answers the names of the slices it created. */
async function sync(ctx: ControllerContext, key: string, { endpoints: endpointsReader, services, slices }: Readers): Promise<string[]> {
  const [namespace = '', name = ''] = key.split('/')
  const existing = slices.byIndex('mirrored', key)
  const endpoints = endpointsReader.get(namespace, name)
  const service = services.get(namespace, name)
  if (!endpoints || !shouldMirror(endpoints) || !service || selectorOf(service)) {
    await Promise.all(existing.map((s) => ctx.client.delete(sliceEntry, namespace, s.metadata.name ?? '').catch(ignoreGone)))
    return []
  }

  const groups = desiredGroups(ctx, { apiVersion: 'v1', kind: 'Endpoints', ...endpoints })
  const labels = { ...endpoints.metadata.labels, [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MIRRORED_BY }
  const annotations = Object.fromEntries(Object.entries(endpoints.metadata.annotations ?? {}).filter(([k]) => !UNMIRRORED_ANNOTATIONS.includes(k)))
  const owner = { apiVersion: 'v1', kind: 'Endpoints', name, uid: endpoints.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }

  // One slice per group: the first existing slice of the same address type and ports is kept, the others go.
  const spare = [...existing]
  const toCreate: Group[] = []
  for (const group of groups.values()) {
    const at = spare.findIndex((s) => s['addressType'] === group.addressType && portsKey(list(s['ports'])) === portsKey(group.ports))
    const current = at >= 0 ? spare.splice(at, 1)[0] : undefined
    if (!current) {
      toCreate.push(group)
      continue
    }
    const wanted = [...group.endpoints.values()]
    const same =
      sameEndpoints(list(current['endpoints']), group.endpoints) &&
      sameJson(current.metadata.labels ?? {}, labels) &&
      sameJson(current.metadata.annotations ?? {}, annotations)
    if (!same) await ctx.client.update(sliceEntry, namespace, { ...current, endpoints: wanted, metadata: { ...current.metadata, labels, annotations } })
  }
  const createdNames: string[] = []
  for (const group of toCreate) {
    const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: group.addressType, ports: group.ports, endpoints: [...group.endpoints.values()] }
    // A slice of the same family that would go is reused rather than deleted and made anew, as upstream recycles them.
    const at = spare.findIndex((s) => s['addressType'] === group.addressType)
    if (at >= 0) {
      const [reused] = spare.splice(at, 1)
      await ctx.client.update(sliceEntry, namespace, { ...reused, ...body, metadata: { ...reused!.metadata, labels, annotations, ownerReferences: [owner] } })
    } else if (!endpoints.metadata.deletionTimestamp) {
      const made = await ctx.client.create(sliceEntry, namespace, { ...body, metadata: { generateName: `${name}-`, namespace, labels, annotations, ownerReferences: [owner] } })
      createdNames.push(made.metadata.name ?? '')
    }
  }
  await Promise.all(spare.map((s) => ctx.client.delete(sliceEntry, namespace, s.metadata.name ?? '').catch(ignoreGone)))
  return createdNames
}

/**
 * The slices the Endpoints call for, by address type and ports. Subsets with the same ports are one (upstream
 * repacks them first); an address both ready and not ready counts as ready; invalid IPs (loopback among them) and addresses past
 * 1000 in a subset are skipped, each with a Warning event on the Endpoints as upstream records.
 */
function desiredGroups(ctx: ControllerContext, endpoints: KubeObject): Map<string, Group> {
  const subsets = new Map<string, { ports: Obj[]; ready: Obj[]; notReady: Obj[] }>()
  for (const subset of list(endpoints['subsets'])) {
    const ports = list(subset['ports']).map((p) => ({ name: p['name'] ?? '', port: p['port'], protocol: p['protocol'] ?? 'TCP', ...(p['appProtocol'] !== undefined ? { appProtocol: p['appProtocol'] } : {}) }))
    const merged: { ports: Obj[]; ready: Obj[]; notReady: Obj[] } = subsets.get(portsKey(ports)) ?? { ports, ready: [], notReady: [] }
    appendAll(merged.ready, list(subset['addresses']))
    appendAll(merged.notReady, list(subset['notReadyAddresses']))
    subsets.set(portsKey(ports), merged)
  }
  const groups = new Map<string, Group>()
  let invalid = 0
  let skipped = 0
  for (const [ports, subset] of subsets) {
    let added = 0
    const seen = new Set<string>()
    for (const [address, ready] of [...subset.ready.map((a) => [a, true] as const), ...subset.notReady.map((a) => [a, false] as const)]) {
      const ip = parseIP(String(address['ip'] ?? ''))
      // Endpoints here may name loopback addresses (local webhooks), which no slice may hold: upstream never sees them.
      if (!ip || nonSpecialIPErrors(formatIP(ip), SOME_PATH, true).length) {
        invalid++
        continue
      }
      if (added >= MAX_ENDPOINTS_PER_SUBSET) {
        skipped++
        continue
      }
      const endpoint = toEndpoint(address, formatIP(ip), ready)
      const id = endpointId(endpoint)
      if (seen.has(id)) continue
      seen.add(id)
      added++
      const addressType = ip.family === 4 ? 'IPv4' : 'IPv6'
      const groupKey = `${addressType}/${ports}`
      let group = groups.get(groupKey)
      if (!group) groups.set(groupKey, (group = { addressType, ports: subset.ports, endpoints: new Map() }))
      group.endpoints.set(id, endpoint)
    }
  }
  if (invalid) ctx.events.record(endpoints, 'Warning', 'InvalidIPAddress', `Skipped ${invalid} invalid IP addresses when mirroring to EndpointSlices`)
  if (skipped) {
    ctx.events.record(endpoints, 'Warning', 'TooManyAddressesToMirror', `A max of ${MAX_ENDPOINTS_PER_SUBSET} addresses can be mirrored to EndpointSlices per Endpoints subset. ${skipped + invalid} addresses were skipped`)
  }
  return groups
}

/** An Endpoints address as a slice's endpoint: its IP written canonically, ready or not, its node, hostname and target. */
function toEndpoint(address: Obj, ip: string, ready: boolean): Obj {
  return {
    addresses: [ip],
    conditions: { ready },
    ...(typeof address['hostname'] === 'string' && address['hostname'] ? { hostname: address['hostname'] } : {}),
    ...(isPlainObject(address['targetRef']) ? { targetRef: address['targetRef'] } : {}),
    ...(typeof address['nodeName'] === 'string' ? { nodeName: address['nodeName'] } : {}),
  }
}

/** What tells endpoints apart, as upstream hashes them: the addresses and the hostname. */
function endpointId(endpoint: Obj): string {
  return JSON.stringify([[...(endpoint['addresses'] as string[])].sort(), endpoint['hostname'] ?? ''])
}

/** Ports as a set: the same ports in another order call for the same slice. */
function portsKey(ports: Obj[]): string {
  return JSON.stringify(ports.map((p) => JSON.stringify([p['name'] ?? '', p['port'], p['protocol'] ?? 'TCP', p['appProtocol'] ?? ''])).sort())
}

function sameEndpoints(current: Obj[], wanted: Map<string, Obj>): boolean {
  return current.length === wanted.size && current.every((e) => sameJson(e, wanted.get(endpointId(e))))
}

function ignoreGone(err: unknown): void {
  if (!hasStatusCode(err, 404)) throw err
}
