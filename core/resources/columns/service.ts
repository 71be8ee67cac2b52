/**
 * A service's TYPE, CLUSTER-IP, EXTERNAL-IP and PORT(S) cells as upstream
 * prints them (`80/TCP`, `80:30080/TCP`, `<pending>` for a load balancer
 * without an address yet). Values upstream's defaulting would fill (type
 * ClusterIP, protocol TCP) are read as their defaults when absent.
 */
import type { KubeObject } from '../../machinery/object.js'
import { at, int, list, text } from './values.js'

export function serviceType(svc: KubeObject): string {
  return text(at(svc, 'spec', 'type')) || 'ClusterIP'
}

export function clusterIP(svc: KubeObject): string {
  return text(at(svc, 'spec', 'clusterIPs', 0)) || text(at(svc, 'spec', 'clusterIP')) || '<none>'
}

/** Load-balancer ingress points: IPs, else hostnames, sorted and without repeats. */
export function loadBalancerAddresses(status: unknown): string {
  const seen = new Set<string>()
  for (const ingress of list(at(status, 'ingress'))) {
    const address = text(at(ingress, 'ip')) || text(at(ingress, 'hostname'))
    if (address) seen.add(address)
  }
  return [...seen].sort().join(',')
}

export function externalIP(svc: KubeObject): string {
  const externalIPs = list(at(svc, 'spec', 'externalIPs')).map(text)
  switch (serviceType(svc)) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>'
    case 'LoadBalancer': {
      const lb = loadBalancerAddresses(at(svc, 'status', 'loadBalancer'))
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',')
      return lb || '<pending>'
    }
    case 'ExternalName':
      return text(at(svc, 'spec', 'externalName'))
    default:
      return '<unknown>'
  }
}

export function servicePorts(svc: KubeObject): string {
  const pieces = list(at(svc, 'spec', 'ports')).map((p) => {
    const protocol = text(at(p, 'protocol')) || 'TCP'
    const nodePort = int(at(p, 'nodePort'))
    return nodePort > 0 ? `${int(at(p, 'port'))}:${nodePort}/${protocol}` : `${int(at(p, 'port'))}/${protocol}`
  })
  return pieces.length > 0 ? pieces.join(',') : '<none>'
}
