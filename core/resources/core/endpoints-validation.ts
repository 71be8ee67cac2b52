/**
 * The rules of an Endpoints object, worded as upstream's ValidateEndpoints
 * words them: every subset lists some address, each address is an IP that
 * means a real peer, and each port is a valid number with a protocol (and a
 * name once there are several).
 */
import { objectItems as objects, text } from '../columns/values.js'
import { type FieldError, type FieldPath, fieldPath, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { IP_MESSAGE, PORT_RANGE_MESSAGE } from './service-validation.js'
import { parseIPSloppy } from './sloppy-ip.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

const PROTOCOLS = ['SCTP', 'TCP', 'UDP']

type Obj = Record<string, unknown>


/** 0.0.0.0 or :: (an IPv4-mapped address counts as IPv4, as Go's net.IP sees it). */
function isUnspecified(v4: number[] | undefined, bytes: number[]): boolean {
  return v4 ? v4.every((b) => b === 0) : bytes.every((b) => b === 0)
}

/**
 * Upstream's ValidateNonSpecialIP: addresses that name no peer (unspecified)
 * or a node-local service (link-local, link-local multicast) are refused.
 *
 * Loopback is refused only when asked (EndpointSlices, as upstream): upstream
 * refuses 127.0.0.0/8 and ::1 in Endpoints too, but this server advertises
 * itself on 127.0.0.1 by default and routes webhooks and aggregated APIs to
 * local servers through such Endpoints.
 */
export function nonSpecialIPErrors(ip: string, path: FieldPath, refuseLoopback = false): FieldError[] {
  const bytes = parseIPSloppy(ip)
  if (!bytes) return [invalid(path, ip, 'must be a valid IP address')]
  const mapped = bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  const v4 = bytes.length === 4 ? bytes : mapped ? bytes.slice(12) : undefined
  const errs: FieldError[] = []
  if (isUnspecified(v4, bytes)) errs.push(invalid(path, ip, `may not be unspecified (${ip})`))
  const [a = 0, b = 0, c = 0] = v4 ?? bytes
  const loopback = v4 ? a === 127 : bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1
  if (refuseLoopback && loopback) errs.push(invalid(path, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'))
  const linkLocal = v4 ? a === 169 && b === 254 : a === 0xfe && (b & 0xc0) === 0x80
  if (linkLocal) errs.push(invalid(path, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'))
  const linkLocalMulticast = v4 ? a === 224 && b === 0 && c === 0 : a === 0xff && (b & 0x0f) === 0x02
  if (linkLocalMulticast) errs.push(invalid(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'))
  return errs
}

function validateAddress(address: Obj, path: FieldPath): FieldError[] {
  const ip = text(address['ip'])
  const errs: FieldError[] = parseIPSloppy(ip) ? [] : [invalid(path.child('ip'), ip, IP_MESSAGE)]
  const hostname = text(address['hostname'])
  if (hostname) for (const msg of isDNS1123Label(hostname)) errs.push(invalid(path.child('hostname'), hostname, msg))
  // A nodeName that is present is checked even when empty (upstream's pointer).
  if (isSet(address['nodeName'])) {
    const node = text(address['nodeName'])
    for (const msg of isDNS1123Subdomain(node)) errs.push(invalid(path.child('nodeName'), node, msg))
  }
  appendAll(errs, nonSpecialIPErrors(ip, path.child('ip')))
  return errs
}

function validatePort(port: Obj, requireName: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const name = text(port['name'])
  if (requireName && !name) errs.push(required(path.child('name')))
  else if (name) for (const msg of isDNS1123Label(name)) errs.push(invalid(path.child('name'), name, msg))
  const number = typeof port['port'] === 'number' ? port['port'] : 0
  if (!Number.isInteger(number) || number < 1 || number > 65535) errs.push(invalid(path.child('port'), number, PORT_RANGE_MESSAGE))
  const protocol = text(port['protocol'])
  if (!protocol) errs.push(required(path.child('protocol')))
  else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(path.child('protocol'), protocol, PROTOCOLS))
  if (isSet(port['appProtocol'])) {
    const appProtocol = text(port['appProtocol'])
    for (const msg of isQualifiedName(appProtocol)) errs.push(invalid(path.child('appProtocol'), appProtocol, msg))
  }
  return errs
}

/** Upstream's ValidateEndpoints (create and update alike: a changed nodeName is allowed). */
/** An Endpoints' subsets, in checkpointed steps: a body of 3 MB holds a million addresses. */
export function* validateEndpointsInSteps(ep: KubeObject): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const subsets = objects(ep['subsets'])
  for (let i = 0; i < subsets.length; i++) {
    const subset = subsets[i]!
    const at = fieldPath('subsets').index(i)
    const addresses = objects(subset['addresses'])
    const notReady = objects(subset['notReadyAddresses'])
    // A headless service's endpoints may have no ports, but every subset has some address.
    if (addresses.length === 0 && notReady.length === 0) errs.push(required(at, 'must specify `addresses` or `notReadyAddresses`'))
    for (const [key, list] of [['addresses', addresses], ['notReadyAddresses', notReady]] as const)
      for (let j = 0; j < list.length; j++) {
        appendAll(errs, validateAddress(list[j]!, at.child(key).index(j)))
        if (checkpointDue()) yield
      }
    const ports = objects(subset['ports'])
    for (let j = 0; j < ports.length; j++) {
      appendAll(errs, validatePort(ports[j]!, ports.length > 1, at.child('ports').index(j)))
      if (checkpointDue()) yield
    }
  }
  return errs
}
