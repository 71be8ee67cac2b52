/**
 * What a Service gets without asking (upstream's SetDefaults_Service and the
 * services strategy's normalisation). The IP-family fields depend on the
 * allocated addresses and are filled where those are taken (service-allocation.ts).
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

export type ServiceSpec = Record<string, unknown>
export type ServicePort = Record<string, unknown>

/** The spec of `svc`, created when missing so that defaults have somewhere to go. */
export function serviceSpec(svc: KubeObject): ServiceSpec {
  if (!isPlainObject(svc['spec'])) svc['spec'] = {}
  return svc['spec'] as ServiceSpec
}

export function servicePorts(spec: ServiceSpec): ServicePort[] {
  return Array.isArray(spec['ports']) ? spec['ports'].filter(isPlainObject) : []
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

export const isHeadless = (spec: ServiceSpec): boolean => spec['clusterIP'] === 'None'

/** ClusterIP, NodePort and LoadBalancer services get cluster IPs; ExternalName ones do not. */
export const needsClusterIP = (spec: ServiceSpec): boolean => spec['type'] !== 'ExternalName'

/** NodePort and LoadBalancer services get node ports. */
export const needsNodePorts = (spec: ServiceSpec): boolean => spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer'

/** A Service's defaults, in checkpointed steps: a body of 3 MB holds a million ports. */
export function* applyServiceDefaultsInSteps(svc: KubeObject): Checkpointed<void> {
  const spec = serviceSpec(svc)
  if (!spec['sessionAffinity']) spec['sessionAffinity'] = 'None'
  if (spec['sessionAffinity'] === 'None') delete spec['sessionAffinityConfig']
  if (!spec['type']) spec['type'] = 'ClusterIP'
  for (const port of servicePorts(spec)) {
    if (!port['protocol']) port['protocol'] = 'TCP'
    if (port['targetPort'] === undefined || port['targetPort'] === 0 || port['targetPort'] === '') port['targetPort'] = port['port']
    if (checkpointDue()) yield
  }
  if (needsNodePorts(spec) && !spec['externalTrafficPolicy']) spec['externalTrafficPolicy'] = 'Cluster'
  if (spec['type'] !== 'ExternalName' && !spec['internalTrafficPolicy']) spec['internalTrafficPolicy'] = 'Cluster'
  if (spec['type'] === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] === undefined)
    spec['allocateLoadBalancerNodePorts'] = true
  // clusterIPs follows a lone clusterIP (upstream's NormalizeClusterIPs on create).
  if (typeof spec['clusterIP'] === 'string' && spec['clusterIP'] !== '' && stringList(spec['clusterIPs']).length === 0)
    spec['clusterIPs'] = [spec['clusterIP']]
  defaultLoadBalancerIPMode(svc, spec)
}

/** SetDefaults_Service's part for the status (LoadBalancerIPMode, GA at 1.32): an addressed ingress point of a LoadBalancer service is a VIP. */
function defaultLoadBalancerIPMode(svc: KubeObject, spec: ServiceSpec): void {
  if (spec['type'] !== 'LoadBalancer' || !isPlainObject(svc['status']) || !isPlainObject(svc['status']['loadBalancer'])) return
  const ingress = svc['status']['loadBalancer']['ingress']
  for (const point of Array.isArray(ingress) ? ingress : []) {
    if (isPlainObject(point) && typeof point['ip'] === 'string' && point['ip'] && (point['ipMode'] === undefined || point['ipMode'] === null)) point['ipMode'] = 'VIP'
  }
}

/** A new Service starts with an empty status, whatever the client sent. */
export function prepareServiceForCreate(svc: KubeObject): void {
  svc['status'] = { loadBalancer: {} }
}

/**
 * An update keeps the status, and keeps the allocated values a client left
 * out (a `kubectl replace` of the original manifest): the cluster IPs while
 * the service still needs them, and each node port whose port is unchanged.
 */
export function prepareServiceForUpdate(svc: KubeObject, old: KubeObject): void {
  if (old['status'] !== undefined) svc['status'] = old['status']
  else delete svc['status']
  const spec = serviceSpec(svc)
  const oldSpec = serviceSpec(structuredClone(old))
  dropTypeDependentFields(spec, oldSpec)
  if (needsClusterIP(spec) && needsClusterIP(oldSpec) && !spec['clusterIP'] && oldSpec['clusterIP']) {
    spec['clusterIP'] = oldSpec['clusterIP']
    if (stringList(spec['clusterIPs']).length === 0) spec['clusterIPs'] = oldSpec['clusterIPs']
  } else if (spec['clusterIP'] && stringList(spec['clusterIPs']).length === 0) {
    spec['clusterIPs'] = [spec['clusterIP']]
  }
  if (needsClusterIP(spec) && needsClusterIP(oldSpec)) {
    if (spec['ipFamilies'] === undefined && oldSpec['ipFamilies'] !== undefined) spec['ipFamilies'] = oldSpec['ipFamilies']
    if (spec['ipFamilyPolicy'] === undefined && oldSpec['ipFamilyPolicy'] !== undefined) spec['ipFamilyPolicy'] = oldSpec['ipFamilyPolicy']
  }
  if (needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    const oldPorts = servicePorts(oldSpec)
    for (const port of servicePorts(spec)) {
      if (port['nodePort']) continue
      const match = oldPorts.find((p) => p['port'] === port['port'] && p['protocol'] === port['protocol'] && p['nodePort'])
      if (match) port['nodePort'] = match['nodePort']
    }
  }
}

/**
 * A type change drops what the new type has no use for when the client left
 * it as it was (upstream's dropTypeDependentFields): the cluster IPs and
 * families on a change to ExternalName, the node ports and external traffic
 * policy on a change to ClusterIP or ExternalName.
 */
function dropTypeDependentFields(spec: ServiceSpec, oldSpec: ServiceSpec): void {
  if (!needsClusterIP(spec) && needsClusterIP(oldSpec)) {
    if (spec['clusterIP'] === oldSpec['clusterIP']) {
      delete spec['clusterIP']
      delete spec['clusterIPs']
    }
    if (JSON.stringify(spec['ipFamilies']) === JSON.stringify(oldSpec['ipFamilies'])) delete spec['ipFamilies']
    if (spec['ipFamilyPolicy'] === oldSpec['ipFamilyPolicy']) delete spec['ipFamilyPolicy']
    if (spec['internalTrafficPolicy'] === oldSpec['internalTrafficPolicy']) delete spec['internalTrafficPolicy']
  }
  if (!needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    const oldNodePorts = new Set(servicePorts(oldSpec).map((p) => p['nodePort']))
    for (const port of servicePorts(spec)) if (oldNodePorts.has(port['nodePort'])) delete port['nodePort']
    if (spec['externalTrafficPolicy'] === oldSpec['externalTrafficPolicy']) delete spec['externalTrafficPolicy']
  }
}
