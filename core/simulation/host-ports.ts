/**
 * Host ports, as kube-scheduler's NodePorts plugin and the kubelet's
 * admission read them: each container port with a `hostPort` takes that
 * port for its protocol on its `hostIP` (all addresses when unset); two
 * such ports clash when the protocol and port are the same and either
 * address covers the other.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'

interface HostPort {
  ip: string
  protocol: string
  port: number
}

const ALL_ADDRESSES = '0.0.0.0'

/** The host ports the pod's containers ask for (init containers' and sidecars' too, as upstream counts them). */
function hostPortsOf(pod: KubeObject): HostPort[] {
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const containers = [spec['containers'], spec['initContainers']].flatMap((v) => (Array.isArray(v) ? v.filter(isPlainObject) : []))
  const ports: HostPort[] = []
  for (const c of containers) {
    for (const p of Array.isArray(c['ports']) ? c['ports'].filter(isPlainObject) : []) {
      const port = Number(p['hostPort'] ?? 0)
      if (!(port > 0)) continue
      ports.push({ ip: String(p['hostIP'] || ALL_ADDRESSES), protocol: String(p['protocol'] || 'TCP'), port })
    }
  }
  return ports
}

const clash = (a: HostPort, b: HostPort): boolean =>
  a.port === b.port && a.protocol === b.protocol && (a.ip === b.ip || a.ip === ALL_ADDRESSES || b.ip === ALL_ADDRESSES)

/** Whether `pod` asks for a host port one of `others` holds. */
export function hostPortTaken(pod: KubeObject, others: readonly KubeObject[]): boolean {
  const wanted = hostPortsOf(pod)
  if (!wanted.length) return false
  const held = others.flatMap(hostPortsOf)
  return wanted.some((w) => held.some((h) => clash(w, h)))
}
