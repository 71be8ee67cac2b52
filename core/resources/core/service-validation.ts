/**
 * The rules of a Service's spec, worded as upstream's ValidateService and
 * ValidateServiceUpdate word them. Whether a requested address or node port
 * is in range and free is the allocator's question (service-allocation.ts).
 */
import { duplicate, type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import { GoLiteral, goStrings } from '../../machinery/go-format.js'
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/names.js'
import { validateLabels } from '../../validation/object-meta.js'
import type { KubeObject } from '../../machinery/object.js'
import { isHeadless, type ServicePort, type ServiceSpec, serviceSpec, servicePorts, stringList } from './service-defaults.js'
import { parseIP } from './service-ranges.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort']
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']
const AFFINITIES = ['ClientIP', 'None']
const FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack']
const FAMILIES = ['IPv4', 'IPv6']
const TRAFFIC_POLICIES = ['Cluster', 'Local']

export const PORT_RANGE_MESSAGE = 'must be between 1 and 65535, inclusive'
export const IP_MESSAGE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'

const validPort = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535

/** Upstream's IsValidPortName, for a targetPort given by name. */
function portNameProblems(name: string): string[] {
  const out: string[] = []
  if (name.length > 15) out.push('must be no more than 15 characters')
  if (!/^[-a-z0-9]+$/.test(name)) out.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')
  if (!/[a-z]/.test(name)) out.push('must contain at least one letter (a-z)')
  if (name.includes('--')) out.push('must not contain consecutive hyphens')
  if (/^-|-$/.test(name)) out.push('must not begin or end with a hyphen')
  return out
}

/** A Go-syntax rendering of the (protocol, port) pair upstream reports as a duplicate; an unset field is Go's zero value. */
function portKey(protocol: unknown, port: unknown): string {
  return `core.ServicePort{Name:"", Protocol:"${String(protocol ?? '')}", AppProtocol:(*string)(nil), Port:${String(port ?? 0)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`
}

function validatePort(port: ServicePort, path: FieldPath, requireName: boolean, names: Set<string>): FieldError[] {
  const errs: FieldError[] = []
  const name = typeof port['name'] === 'string' ? port['name'] : ''
  if (requireName && !name) errs.push(required(path.child('name')))
  else if (name) {
    for (const msg of isDNS1123Label(name)) errs.push(invalid(path.child('name'), name, msg))
    if (names.has(name)) errs.push(duplicate(path.child('name'), name))
    names.add(name)
  }
  if (!validPort(port['port'])) errs.push(invalid(path.child('port'), port['port'] ?? 0, PORT_RANGE_MESSAGE))
  const protocol = port['protocol']
  if (!protocol) errs.push(required(path.child('protocol')))
  else if (!PROTOCOLS.includes(String(protocol))) errs.push(notSupported(path.child('protocol'), protocol, PROTOCOLS))
  const target = port['targetPort']
  if (typeof target === 'string') {
    for (const msg of portNameProblems(target)) errs.push(invalid(path.child('targetPort'), target, msg))
  } else if (!validPort(target)) errs.push(invalid(path.child('targetPort'), target ?? 0, PORT_RANGE_MESSAGE))
  const nodePort = port['nodePort']
  if (nodePort !== undefined && nodePort !== 0 && !validPort(nodePort))
    errs.push(invalid(path.child('nodePort'), nodePort, PORT_RANGE_MESSAGE))
  return errs
}

function* validatePorts(spec: ServiceSpec, specPath: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const ports = servicePorts(spec)
  const portsPath = specPath.child('ports')
  if (ports.length === 0 && !isHeadless(spec) && spec['type'] !== 'ExternalName') errs.push(required(portsPath))
  const names = new Set<string>()
  for (let i = 0; i < ports.length; i++) {
    appendAll(errs, validatePort(ports[i]!, portsPath.index(i), ports.length > 1, names))
    if (checkpointDue()) yield
  }
  if (spec['type'] === 'ClusterIP')
    for (let i = 0; i < ports.length; i++) {
      if (ports[i]!['nodePort']) errs.push(forbiddenField(portsPath.index(i).child('nodePort'), "may not be used when `type` is 'ClusterIP'"))
      if (checkpointDue()) yield
    }
  const nodePorts = new Set<string>()
  const pairs = new Set<string>()
  for (let i = 0; i < ports.length; i++) {
    if (checkpointDue()) yield
    const p = ports[i]!
    if (p['nodePort']) {
      const key = `${String(p['protocol'])}/${String(p['nodePort'])}`
      if (nodePorts.has(key)) errs.push(duplicate(portsPath.index(i).child('nodePort'), p['nodePort']))
      nodePorts.add(key)
    }
    const key = `${String(p['protocol'])}/${String(p['port'])}`
    if (pairs.has(key)) errs.push(duplicate(portsPath.index(i), new GoLiteral(portKey(p['protocol'], p['port']))))
    pairs.add(key)
  }
  return errs
}

/** clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy, as upstream's ValidateServiceClusterIPsRelatedFields. */
function validateClusterIPs(spec: ServiceSpec, specPath: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const ipsPath = specPath.child('clusterIPs')
  const clusterIP = typeof spec['clusterIP'] === 'string' ? spec['clusterIP'] : ''
  const ips = stringList(spec['clusterIPs'])
  const families = stringList(spec['ipFamilies'])
  const policy = spec['ipFamilyPolicy']
  if (spec['type'] === 'ExternalName') {
    if (clusterIP || ips.length) errs.push(forbiddenField(ipsPath, 'may not be set for ExternalName services'))
    if (families.length) errs.push(forbiddenField(specPath.child('ipFamilies'), 'may not be set for ExternalName services'))
    if (policy !== undefined && policy !== null)
      errs.push(forbiddenField(specPath.child('ipFamilyPolicy'), 'may not be set for ExternalName services'))
    return errs
  }
  if (!clusterIP && ips.length) errs.push(invalid(ipsPath, goStrings(ips), 'must be empty when `clusterIP` is not specified'))
  if (clusterIP && ips[0] !== clusterIP) errs.push(invalid(ipsPath, goStrings(ips), 'first value must match `clusterIP`'))
  if (ips.length > 2) errs.push(invalid(ipsPath, goStrings(ips), 'may only hold up to 2 values'))
  if (clusterIP === 'None' && ips.length > 1) errs.push(invalid(ipsPath, goStrings(ips), 'must not have more than one value when `clusterIP` is `None`'))
  ips.forEach((ip, i) => {
    if (ip === 'None' && i === 0) return
    if (!parseIP(ip)) errs.push(invalid(ipsPath.index(i), ip, IP_MESSAGE))
  })
  const parsed = ips.map(parseIP)
  if (parsed.length === 2 && parsed[0] && parsed[1] && parsed[0].family === parsed[1].family)
    errs.push(invalid(ipsPath, goStrings(ips), 'may specify no more than one IP for each IP family'))
  if (clusterIP === 'None' && (spec['type'] === 'LoadBalancer' || spec['type'] === 'NodePort'))
    errs.push(invalid(ipsPath.index(0), 'None', `may not be set to 'None' for ${String(spec['type'])} services`))
  if (policy !== undefined && policy !== null && !FAMILY_POLICIES.includes(String(policy)))
    errs.push(notSupported(specPath.child('ipFamilyPolicy'), policy, FAMILY_POLICIES))
  const familiesPath = specPath.child('ipFamilies')
  families.forEach((f, i) => {
    if (!FAMILIES.includes(f)) errs.push(notSupported(familiesPath.index(i), f, FAMILIES))
    else if (families.indexOf(f) !== i) errs.push(duplicate(familiesPath.index(i), f))
  })
  if (families.length > 2) errs.push(invalid(familiesPath, goStrings(families), 'may only hold up to 2 values'))
  if (policy === 'SingleStack' && (families.length > 1 || ips.length > 1))
    errs.push(invalid(familiesPath, goStrings(families), "must be a single value when `ipFamilyPolicy` is 'SingleStack'"))
  return errs
}

/** A Service's rules, in checkpointed steps: a body of 3 MB holds a million ports. */
export function* validateServiceInSteps(svc: KubeObject): Checkpointed<FieldError[]> {
  const spec = serviceSpec(svc)
  const specPath = fieldPath('spec')
  const errs: FieldError[] = []
  const type = spec['type']
  if (!type) errs.push(required(specPath.child('type')))
  else if (!TYPES.includes(String(type))) errs.push(notSupported(specPath.child('type'), type, TYPES))
  if (type === 'ExternalName') {
    const cname = typeof spec['externalName'] === 'string' ? spec['externalName'].replace(/\.$/, '') : ''
    if (!cname) errs.push(required(specPath.child('externalName')))
    else for (const msg of isDNS1123Subdomain(cname)) errs.push(invalid(specPath.child('externalName'), cname, msg))
  }
  yield* appendAllInSteps(errs, yield* validatePorts(spec, specPath))
  if (spec['selector'] !== undefined && spec['selector'] !== null) appendAll(errs, validateLabels(spec['selector'], specPath.child('selector')))
  const affinity = spec['sessionAffinity']
  if (!affinity) errs.push(required(specPath.child('sessionAffinity')))
  else if (!AFFINITIES.includes(String(affinity))) errs.push(notSupported(specPath.child('sessionAffinity'), affinity, AFFINITIES))
  else if (affinity === 'None' && spec['sessionAffinityConfig'])
    errs.push(forbiddenField(specPath.child('sessionAffinityConfig'), 'must not be set when session affinity is None'))
  appendAll(errs, validateClusterIPs(spec, specPath))
  stringList(spec['externalIPs']).forEach((ip, i) => {
    if (!parseIP(ip)) errs.push(invalid(specPath.child('externalIPs').index(i), ip, IP_MESSAGE))
  })
  for (const key of ['externalTrafficPolicy', 'internalTrafficPolicy']) {
    const value = spec[key]
    if (value && !TRAFFIC_POLICIES.includes(String(value))) errs.push(notSupported(specPath.child(key), value, TRAFFIC_POLICIES))
  }
  if (spec['externalTrafficPolicy'] && type !== 'NodePort' && type !== 'LoadBalancer')
    errs.push(invalid(specPath.child('externalTrafficPolicy'), spec['externalTrafficPolicy'], 'may only be set when `type` is \'NodePort\' or \'LoadBalancer\''))
  return errs
}

/**
 * On update the primary cluster IP stays what it was, unless the service
 * changes to or from ExternalName; a second one may be added or removed.
 */
export function* validateServiceUpdateInSteps(svc: KubeObject, old: KubeObject): Checkpointed<FieldError[]> {
  const errs = yield* validateServiceInSteps(svc)
  const spec = serviceSpec(svc)
  const oldSpec = serviceSpec(structuredClone(old))
  if (spec['type'] === 'ExternalName' || oldSpec['type'] === 'ExternalName') return errs
  const ips = stringList(spec['clusterIPs'])
  stringList(oldSpec['clusterIPs']).forEach((ip, i) => {
    if (i === 0 ? ips[0] !== ip : ips[i] !== undefined && ips[i] !== ip)
      errs.push(invalid(fieldPath('spec').child('clusterIPs').index(i), goStrings(ips), 'may not change once set'))
  })
  return errs
}
