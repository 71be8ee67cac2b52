/**
 * What the endpoints and EndpointSlice controllers share: which pods a
 * Service selects, and the pod's port a Service port targets.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

/** The Service's selector; undefined for a Service without one (its endpoints are its owner's to write). */
export function selectorOf(service: KubeObject): Record<string, string> | undefined {
  const selector = obj(service['spec'])['selector']
  return isPlainObject(selector) && Object.keys(selector).length > 0 ? (selector as Record<string, string>) : undefined
}

export function selects(service: KubeObject, pod: KubeObject): boolean {
  const selector = selectorOf(service)
  const labels = pod.metadata.labels ?? {}
  return selector !== undefined && Object.entries(selector).every(([k, v]) => labels[k] === v)
}

/** The pod's port for a Service port's targetPort: a number as is, a name looked up in its containers; undefined when it has none. */
export function targetPort(pod: KubeObject, port: Obj): number | undefined {
  const target = port['targetPort'] ?? port['port']
  if (typeof target === 'number') return target
  for (const container of list(obj(pod['spec'])['containers'])) {
    const found = list(container['ports']).find((p) => p['name'] === target && (p['protocol'] ?? 'TCP') === (port['protocol'] ?? 'TCP'))
    if (found) return Number(found['containerPort'])
  }
  return undefined
}
