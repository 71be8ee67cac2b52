/**
 * The rules of an EndpointSlice, worded as upstream's discovery validation
 * words them: a known address type that never changes, at most 1000
 * endpoints of 1 to 100 addresses each, every address of the slice's type
 * and naming a real peer (no unspecified, loopback or link-local address:
 * a slice is where proxies and gateways find their backends, so a slice
 * naming 127.0.0.1 or 169.254.169.254 would send traffic to the node itself
 * or its metadata service), valid node names, hostnames, topology and
 * zone hints, and uniquely named ports with a known protocol.
 */
import { objectItems as objects, text } from '../columns/values.js'
import { immutableField } from '../apps/selector.js'
import { nonSpecialIPErrors } from '../core/endpoints-validation.js'
import { parseIPSloppy } from '../core/sloppy-ip.js'
import { appendAll } from '../../machinery/append-all.js'
import { type FieldError, type FieldPath, duplicate, fieldPath, invalid, isSet, notSupported, required, tooMany } from '../../machinery/field.js'
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '../../machinery/names.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'
import { validateLabels } from '../../validation/object-meta.js'

type Obj = Record<string, unknown>

/** As Go's sets.List() gives them: sorted. */
const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6']
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']
const MAX_ENDPOINTS = 1000
const MAX_ADDRESSES = 100
const MAX_PORTS = 20_000
const MAX_TOPOLOGY_LABELS = 16
const MAX_ZONE_HINTS = 8

/** The address's family as upstream's parser reads it: an IPv4-mapped IPv6 address counts as IPv4 (Go's To4). */
function familyOf(address: string): 4 | 6 | undefined {
  const bytes = parseIPSloppy(address)
  if (!bytes) return undefined
  if (bytes.length === 4) return 4
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  return mapped ? 4 : 6
}

/** upstream's IsFullyQualifiedDomainName: a DNS subdomain of two labels or more, a trailing dot allowed. */
function fqdnErrors(address: string, path: FieldPath): FieldError[] {
  if (address === '') return [required(path)]
  const name = address.endsWith('.') ? address.slice(0, -1) : address
  const subdomain = isDNS1123Subdomain(name)
  if (subdomain.length) return [invalid(path, name, subdomain.join(','))]
  const labels = name.split('.')
  if (labels.length < 2) return [invalid(path, name, 'should be a domain with at least two segments separated by dots')]
  for (const label of labels) {
    const problems = isDNS1123Label(label)
    if (problems.length) return [invalid(path, label, problems.join(','))]
  }
  return []
}

function addressErrors(address: string, addressType: string, path: FieldPath): FieldError[] {
  // Unknown address types are refused at addressType; their addresses are not checked, as upstream.
  if (addressType === 'FQDN') return fqdnErrors(address, path)
  if (addressType !== 'IPv4' && addressType !== 'IPv6') return []
  const family = addressType === 'IPv4' ? 4 : 6
  const errs: FieldError[] = familyOf(address) === family ? [] : [invalid(path, address, `must be a valid ${addressType} address`)]
  appendAll(errs, nonSpecialIPErrors(address, path, true))
  return errs
}

function hintErrors(hints: Obj, path: FieldPath): FieldError[] {
  const zones = objects(hints['forZones'])
  const at = path.child('forZones')
  if (zones.length > MAX_ZONE_HINTS) return [tooMany(at, zones.length, MAX_ZONE_HINTS)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  for (let i = 0; i < zones.length; i++) {
    const name = text(zones[i]!['name'])
    const namePath = at.index(i).child('name')
    if (seen.has(name)) errs.push(duplicate(namePath, name))
    else seen.add(name)
    for (const msg of isValidLabelValue(name)) errs.push(invalid(namePath, name, msg))
  }
  return errs
}

function* endpointsErrors(slice: KubeObject, path: FieldPath): Checkpointed<FieldError[]> {
  const endpoints = objects(slice['endpoints'])
  if (endpoints.length > MAX_ENDPOINTS) return [tooMany(path, endpoints.length, MAX_ENDPOINTS)]
  const addressType = text(slice['addressType'])
  const errs: FieldError[] = []
  for (let i = 0; i < endpoints.length; i++) {
    const endpoint = endpoints[i]!
    const at = path.index(i)
    const addressPath = at.child('addresses')
    const addresses = Array.isArray(endpoint['addresses']) ? endpoint['addresses'] : []
    if (addresses.length === 0) errs.push(required(addressPath, 'must contain at least 1 address'))
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(addressPath, addresses.length, MAX_ADDRESSES))
    // Every address is checked, even past the limit, as upstream: the request is refused either way.
    for (let j = 0; j < addresses.length; j++) {
      appendAll(errs, addressErrors(text(addresses[j]), addressType, addressPath.index(j)))
      if (checkpointDue()) yield
    }
    if (isSet(endpoint['nodeName'])) {
      const node = text(endpoint['nodeName'])
      for (const msg of isDNS1123Subdomain(node)) errs.push(invalid(at.child('nodeName'), node, msg))
    }
    const topology = endpoint['deprecatedTopology']
    const topologyPath = at.child('deprecatedTopology')
    if (isPlainObject(topology) && Object.keys(topology).length > MAX_TOPOLOGY_LABELS) {
      errs.push(tooMany(topologyPath, Object.keys(topology).length, MAX_TOPOLOGY_LABELS))
    }
    appendAll(errs, validateLabels(topology, topologyPath))
    if (isSet(endpoint['hostname'])) {
      const hostname = text(endpoint['hostname'])
      for (const msg of isDNS1123Label(hostname)) errs.push(invalid(at.child('hostname'), hostname, msg))
    }
    if (isPlainObject(endpoint['hints'])) appendAll(errs, hintErrors(endpoint['hints'], at.child('hints')))
    if (checkpointDue()) yield
  }
  return errs
}

function* portsErrors(ports: Obj[], path: FieldPath): Checkpointed<FieldError[]> {
  if (ports.length > MAX_PORTS) return [tooMany(path, ports.length, MAX_PORTS)]
  const errs: FieldError[] = []
  const names = new Set<string>()
  for (let i = 0; i < ports.length; i++) {
    const port = ports[i]!
    const at = path.index(i)
    const name = text(port['name'])
    if (name) for (const msg of isDNS1123Label(name)) errs.push(invalid(at.child('name'), name, msg))
    if (names.has(name)) errs.push(duplicate(at.child('name'), name))
    else names.add(name)
    if (!isSet(port['protocol'])) errs.push(required(at.child('protocol')))
    else if (!PROTOCOLS.includes(text(port['protocol']))) errs.push(notSupported(at.child('protocol'), text(port['protocol']), PROTOCOLS))
    if (isSet(port['appProtocol'])) {
      const appProtocol = text(port['appProtocol'])
      for (const msg of isQualifiedName(appProtocol)) errs.push(invalid(at.child('appProtocol'), appProtocol, msg))
    }
    if (checkpointDue()) yield
  }
  return errs
}

/** upstream's ValidateEndpointSliceCreate (the metadata is checked by the common path, the name as a DNS subdomain). */
export function* validateEndpointSliceInSteps(slice: KubeObject): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const addressType = text(slice['addressType'])
  if (!addressType) errs.push(required(fieldPath('addressType')))
  else if (!ADDRESS_TYPES.includes(addressType)) errs.push(notSupported(fieldPath('addressType'), addressType, ADDRESS_TYPES))
  appendAll(errs, yield* endpointsErrors(slice, fieldPath('endpoints')))
  appendAll(errs, yield* portsErrors(objects(slice['ports']), fieldPath('ports')))
  return errs
}

/** upstream's ValidateEndpointSliceUpdate: the create rules, and an address type kept as created. */
export function* validateEndpointSliceUpdateInSteps(slice: KubeObject, old: KubeObject): Checkpointed<FieldError[]> {
  const errs = yield* validateEndpointSliceInSteps(slice)
  appendAll(errs, immutableField(text(slice['addressType']), text(old['addressType']), fieldPath('addressType')))
  return errs
}
