/**
 * The address rules of networking.k8s.io: CIDR fields (network policy IP
 * blocks), IPAddress parent references and ServiceCIDR ranges, with
 * upstream's messages.
 */
import { at, list, record, text } from '../columns/values.js'
import { parseCIDR, parseIP, type CIDR } from '../core/service-ranges.js'
import type { KubeObject } from '../../machinery/object.js'
import { type FieldError, type FieldPath, fieldPath, invalid, required } from '../../machinery/field.js'
import { GoLiteral, goStrings } from '../../machinery/go-format.js'
import { isDNS1123Subdomain, isValidPathSegmentName } from '../../machinery/names.js'

export const CIDR_MESSAGE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'
export const IMMUTABLE = 'field is immutable'

/** Whether `text` parses as an IP address (of either family). */
export function isIP(text: string): boolean {
  return parseIP(text) !== undefined
}

/** The parsed CIDR, or undefined with the error pushed onto `errs`. */
export function checkCIDR(value: string, path: FieldPath, errs: FieldError[]): CIDR | undefined {
  const cidr = parseCIDR(value)
  if (!cidr) errs.push(invalid(path, value, CIDR_MESSAGE))
  return cidr
}

/** Whether `inner` is a strictly smaller range inside `outer`. */
export function strictSubset(inner: CIDR, outer: CIDR): boolean {
  if (inner.family !== outer.family || inner.prefix <= outer.prefix) return false
  const width = outer.family === 'IPv4' ? 32 : 128
  const shift = BigInt(width - outer.prefix)
  return inner.base >> shift === outer.base >> shift
}

function pathSegment(value: unknown, path: FieldPath, errs: FieldError[], isRequired: boolean): void {
  const name = text(value)
  if (!name) {
    if (isRequired) errs.push(required(path))
    return
  }
  for (const msg of isValidPathSegmentName(name)) errs.push(invalid(path, name, msg))
}

/** IPAddress: the parent reference is required, named by resource and name. */
export function validateIPAddress(obj: KubeObject): FieldError[] {
  const path = fieldPath('spec').child('parentRef')
  const ref = at(obj, 'spec', 'parentRef')
  if (ref === undefined || ref === null) return [required(path)]
  const errs: FieldError[] = []
  const group = text(at(ref, 'group'))
  // The core group (Services) is the empty string, so an empty group is fine.
  if (group) for (const msg of isDNS1123Subdomain(group)) errs.push(invalid(path.child('group'), group, msg))
  pathSegment(at(ref, 'resource'), path.child('resource'), errs, true)
  pathSegment(at(ref, 'name'), path.child('name'), errs, true)
  pathSegment(at(ref, 'namespace'), path.child('namespace'), errs, false)
  return errs
}

/** Go's rendering of a ParentReference, as the immutability message shows it. */
function parentRefLiteral(ref: unknown): GoLiteral {
  if (ref === undefined || ref === null) return new GoLiteral('nil')
  const field = (name: string) => JSON.stringify(text(at(ref, name.toLowerCase())))
  return new GoLiteral(`networking.ParentReference{Group:${field('Group')}, Resource:${field('Resource')}, Namespace:${field('Namespace')}, Name:${field('Name')}}`)
}

export function validateIPAddressUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const next = record(at(obj, 'spec', 'parentRef'))
  const prev = record(at(old, 'spec', 'parentRef'))
  const same = ['group', 'resource', 'namespace', 'name'].every((k) => text(next[k]) === text(prev[k]))
  return same ? [] : [invalid(fieldPath('spec').child('parentRef'), parentRefLiteral(at(obj, 'spec', 'parentRef')), IMMUTABLE)]
}

const cidrsOf = (obj: KubeObject): string[] => list(at(obj, 'spec', 'cidrs')).map(text)

/** ServiceCIDR: one or two valid ranges, at most one per IP family. */
export function validateServiceCIDRSpec(obj: KubeObject): FieldError[] {
  const path = fieldPath('spec').child('cidrs')
  const cidrs = cidrsOf(obj)
  if (cidrs.length === 0) return [required(path, 'at least one CIDR required')]
  if (cidrs.length > 2) return [invalid(path, new GoLiteral(`networking.ServiceCIDRSpec{CIDRs:${goStrings(cidrs).text}}`), 'may only hold up to 2 values')]
  const errs: FieldError[] = []
  const parsed = cidrs.map((c, i) => checkCIDR(c, path.index(i), errs))
  const [first, second] = parsed
  if (first && second && first.family === second.family) {
    errs.push(invalid(path, goStrings(cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'))
  }
  return errs
}

/** The ranges never change, except that a single-stack range may gain its second family (run after the spec rules). */
export function validateServiceCIDRUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const path = fieldPath('spec').child('cidrs')
  const next = cidrsOf(obj)
  const prev = cidrsOf(old)
  if (next.length === prev.length) {
    return prev.flatMap((c, i) => (c === next[i] ? [] : [invalid(path.index(i), next[i], IMMUTABLE)]))
  }
  if (prev.length === 1 && next.length === 2) {
    // Gaining the second family; the new range itself is checked by the spec rules.
    return next[0] === prev[0] ? [] : [invalid(path.index(0), next[0], IMMUTABLE)]
  }
  return [invalid(path, goStrings(next), IMMUTABLE)]
}
