/**
 * Where a webhook named by a Service reference is reached: the first ready
 * address of the Service's endpoints at the port the Service maps the
 * referenced port to (upstream's endpoint routing), else the Service's
 * cluster IP. A Service without a selector and hand-written Endpoints
 * pointing at 127.0.0.1 is how a webhook on this machine is named.
 */
import type { ServiceReference } from '../resources/apiextensions/types.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'

type ServicePort = { name?: string; port?: number; targetPort?: number | string }
type EndpointSubset = { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }

const hostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`)

/** Reads one object of the core group by resource (a Service, its Endpoints); rejects when there is none. */
export type CoreObjectReader = (resource: 'services' | 'endpoints', namespace: string, name: string) => Promise<KubeObject>

/** The resolver for ConversionDeps.resolveService: the base URL (`https://10.0.0.1:8443`) of the reference. */
export function serviceResolver(read: CoreObjectReader): (ref: ServiceReference) => Promise<string> {
  return async (ref) => {
    const wanted = ref.port ?? 443
    const service = await read('services', ref.namespace, ref.name).catch(() => {
      throw new Error(`service "${ref.name}" not found in namespace "${ref.namespace}"`)
    })
    const spec = isPlainObject(service['spec']) ? service['spec'] : {}
    const ports = (Array.isArray(spec['ports']) ? spec['ports'] : []) as ServicePort[]
    const port = ports.find((p) => p.port === wanted)
    if (!port) throw new Error(`no service port ${wanted} found for service "${ref.name}"`)
    const endpoints = await read('endpoints', ref.namespace, ref.name).catch(() => undefined)
    const subsets = (Array.isArray(endpoints?.['subsets']) ? endpoints['subsets'] : []) as EndpointSubset[]
    for (const subset of subsets) {
      const ip = subset.addresses?.find((a) => a.ip)?.ip
      const target =
        subset.ports?.find((p) => (port.name ? p.name === port.name : true))?.port ??
        (typeof port.targetPort === 'number' ? port.targetPort : undefined)
      if (ip && target) return `https://${hostPort(ip, target)}`
    }
    const clusterIP = typeof spec['clusterIP'] === 'string' && spec['clusterIP'] !== 'None' ? spec['clusterIP'] : undefined
    if (!clusterIP) throw new Error(`service "${ref.name}" in namespace "${ref.namespace}" has no endpoints and no cluster IP`)
    return `https://${hostPort(clusterIP, wanted)}`
  }
}
