/**
 * Where an APIService's Service is reached, as upstream's two resolvers
 * decide: the cluster IP (or an ExternalName's name) at the Service's port,
 * or, with `--enable-aggregator-routing`, an address of the Service's
 * Endpoints at the target port of the matching named port. The serving
 * certificate is checked against `<service>.<namespace>.svc` either way.
 */
import { serviceUnavailable } from '../machinery/status-error.js'
import type { StoredObjects } from '../client/stored-objects.js'
import type { Catalogue } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { ServiceReference } from './apiservice.js'

export interface ServiceLocation {
  origin: string
  serverName: string
}

type ServicePort = { name?: string; port?: number }
type EndpointSubset = { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }

const hostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)

/** What the aggregator reads and writes: the catalogue served, and objects as stored (in memory, no request per proxied call). */
export interface AggregatorObjects {
  readonly catalogue: Catalogue
  readonly stored: StoredObjects
}

async function read(objects: AggregatorObjects, resource: string, namespace: string, name: string): Promise<KubeObject | undefined> {
  const entry = objects.catalogue.lookup('', 'v1', resource)
  if (!entry) return undefined
  try {
    return await objects.stored.get(entry, namespace, name)
  } catch {
    return undefined
  }
}

function specOf(service: KubeObject): Record<string, unknown> {
  return isPlainObject(service['spec']) ? service['spec'] : {}
}

/** The Service, or the error upstream's listers give for a missing one. */
export async function readService(objects: AggregatorObjects, ref: ServiceReference): Promise<KubeObject | undefined> {
  return read(objects, 'services', ref.namespace, ref.name)
}

function servicePort(service: KubeObject, port: number, name: string): ServicePort {
  const ports = (Array.isArray(specOf(service)['ports']) ? specOf(service)['ports'] : []) as ServicePort[]
  const found = ports.find((p) => p.port === port)
  if (!found) throw new Error(`no service port ${port} found for service "${name}"`)
  return found
}

/** Upstream's ResolveCluster. */
async function clusterLocation(objects: AggregatorObjects, ref: ServiceReference): Promise<string> {
  const service = await readService(objects, ref)
  if (!service) throw new Error(`service "${ref.name}" not found`)
  const spec = specOf(service)
  const type = typeof spec['type'] === 'string' ? spec['type'] : 'ClusterIP'
  if (type === 'ExternalName') return hostPort(String(spec['externalName'] ?? ''), ref.port)
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new Error(`unsupported service type "${type}"`)
  if (spec['clusterIP'] === 'None') throw new Error('cannot route to service with ClusterIP "None"')
  const port = servicePort(service, ref.port, ref.name)
  return hostPort(String(spec['clusterIP'] ?? ''), port.port ?? ref.port)
}

/** Upstream's ResolveEndpoint: the first address of a subset that has the port of the same name. */
async function endpointLocation(objects: AggregatorObjects, ref: ServiceReference): Promise<string> {
  const service = await readService(objects, ref)
  if (!service) throw new Error(`service "${ref.name}" not found`)
  const type = String(specOf(service)['type'] ?? 'ClusterIP')
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new Error(`unsupported service type "${type}"`)
  const port = servicePort(service, ref.port, ref.name)
  const endpoints = await read(objects, 'endpoints', ref.namespace, ref.name)
  const subsets = (Array.isArray(endpoints?.['subsets']) ? endpoints['subsets'] : []) as EndpointSubset[]
  for (const subset of subsets) {
    const target = subset.ports?.find((p) => (p.name ?? '') === (port.name ?? ''))?.port
    const ip = subset.addresses?.find((a) => a.ip)?.ip
    if (ip && target) return hostPort(ip, target)
  }
  throw serviceUnavailable(`no endpoints available for service "${ref.name}"`)
}

export function serviceLocator(objects: AggregatorObjects, endpointRouting: boolean): (ref: ServiceReference) => Promise<ServiceLocation> {
  return async (ref) => {
    const host = endpointRouting ? await endpointLocation(objects, ref) : await clusterLocation(objects, ref)
    return { origin: `https://${host}`, serverName: `${ref.name}.${ref.namespace}.svc` }
  }
}
