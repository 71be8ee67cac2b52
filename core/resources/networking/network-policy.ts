/**
 * NetworkPolicy defaults and rules (upstream's networking/v1 defaults and
 * ValidateNetworkPolicySpec): policy types follow from the rules present,
 * ports default to TCP, peers are selectors or one IP block.
 */
import { at, list, record, text } from '../columns/values.js'
import { portNameErrors } from '../core/pod-spec-containers.js'
import { parseCIDR } from '../core/service-ranges.js'
import type { KubeObject } from '../../machinery/object.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import { validateLabelSelector } from '../../validation/label-selector.js'
import { checkCIDR, strictSubset } from './addresses.js'
import { appendAll } from '../../machinery/append-all.js'

const PROTOCOLS = ['TCP', 'UDP', 'SCTP']
const POLICY_TYPES = ['Ingress', 'Egress']
const PORT_RANGE = 'must be between 1 and 65535, inclusive'

const validPort = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 65535

/** Every rule's ports: the protocol defaults to TCP. */
function rulePorts(spec: Record<string, unknown>): Record<string, unknown>[] {
  return [...list(spec['ingress']), ...list(spec['egress'])].flatMap((rule) => list(at(rule, 'ports'))).map(record)
}

export function applyNetworkPolicyDefaults(obj: KubeObject): void {
  const spec = obj['spec']
  if (spec === undefined || spec === null || typeof spec !== 'object') return
  const s = spec as Record<string, unknown>
  for (const port of rulePorts(s)) port['protocol'] ??= 'TCP'
  // No policy types means Ingress, plus Egress when there are egress rules.
  if (list(s['policyTypes']).length === 0) s['policyTypes'] = list(s['egress']).length > 0 ? ['Ingress', 'Egress'] : ['Ingress']
}

function validatePort(port: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const protocol = at(port, 'protocol')
  if (isSet(protocol) && !PROTOCOLS.includes(text(protocol))) errs.push(notSupported(path.child('protocol'), protocol, PROTOCOLS))
  const number = at(port, 'port')
  const endPort = at(port, 'endPort')
  if (typeof number === 'number') {
    if (!validPort(number)) errs.push(invalid(path.child('port'), number, PORT_RANGE))
    if (typeof endPort === 'number') {
      if (endPort < number) errs.push(invalid(path.child('endPort'), endPort, 'must be greater than or equal to `port`'))
      if (!validPort(endPort)) errs.push(invalid(path.child('endPort'), endPort, PORT_RANGE))
    }
  } else if (typeof number === 'string') {
    if (isSet(endPort)) errs.push(invalid(path.child('endPort'), endPort, 'may not be specified when `port` is non-numeric'))
    for (const msg of portNameErrors(number)) errs.push(invalid(path.child('port'), number, msg))
  } else if (isSet(endPort)) {
    errs.push(invalid(path.child('endPort'), endPort, 'may not be specified when `port` is not specified'))
  }
  return errs
}

/**
 * An IP block: a valid CIDR, and exceptions strictly inside it. Ranges the
 * stored policy already held are not checked again, so that an update does
 * not fail on a value an older server accepted.
 */
function validateIPBlock(block: unknown, path: FieldPath, existing: ReadonlySet<string>): FieldError[] {
  const value = text(at(block, 'cidr'))
  if (!value) return [required(path.child('cidr'))]
  const errs: FieldError[] = []
  const cidr = existing.has(value) ? parseCIDR(value) : checkCIDR(value, path.child('cidr'), errs)
  if (!cidr) return errs
  list(at(block, 'except')).forEach((raw, i) => {
    const exceptPath = path.child('except').index(i)
    const except = text(raw)
    const parsed = existing.has(except) ? parseCIDR(except) : checkCIDR(except, exceptPath, errs)
    if (parsed && !strictSubset(parsed, cidr)) errs.push(invalid(exceptPath, except, 'must be a strict subset of `cidr`'))
  })
  return errs
}

function validatePeer(peer: unknown, path: FieldPath, existing: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = []
  let peers = 0
  for (const selector of ['podSelector', 'namespaceSelector']) {
    const value = at(peer, selector)
    if (!isSet(value)) continue
    peers++
    appendAll(errs, validateLabelSelector(value, path.child(selector)))
  }
  const block = at(peer, 'ipBlock')
  if (isSet(block)) {
    peers++
    appendAll(errs, validateIPBlock(block, path.child('ipBlock'), existing))
  }
  if (peers === 0) errs.push(required(path, 'must specify a peer'))
  else if (peers > 1 && isSet(block)) errs.push(forbiddenField(path, 'may not specify both ipBlock and another peer'))
  return errs
}

export function validateNetworkPolicy(obj: KubeObject, existing: ReadonlySet<string> = new Set()): FieldError[] {
  const path = fieldPath('spec')
  const spec = record(obj['spec'])
  const errs = validateLabelSelector(spec['podSelector'], path.child('podSelector'))
  for (const [rules, peersField] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    list(spec[rules]).forEach((rule, i) => {
      const rulePath = path.child(rules).index(i)
      list(at(rule, 'ports')).forEach((port, j) => appendAll(errs, validatePort(port, rulePath.child('ports').index(j))))
      list(at(rule, peersField)).forEach((peer, j) => appendAll(errs, validatePeer(peer, rulePath.child(peersField).index(j), existing)))
    })
  }
  const types = list(spec['policyTypes']).map(text)
  if (types.length > POLICY_TYPES.length) {
    errs.push(invalid(path.child('policyTypes'), goStrings(types, 'networking.PolicyType'), 'may not specify more than two policyTypes'))
    return errs
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) errs.push(notSupported(path.child('policyTypes').index(i), t, POLICY_TYPES))
  })
  return errs
}

/** The ranges of the stored policy's IP blocks, accepted again as they are. */
function storedRanges(old: KubeObject): Set<string> {
  const ranges = new Set<string>()
  for (const [rules, peersField] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    for (const rule of list(at(old, 'spec', rules))) {
      for (const peer of list(at(rule, peersField))) {
        const block = at(peer, 'ipBlock')
        if (!isSet(block)) continue
        ranges.add(text(at(block, 'cidr')))
        for (const except of list(at(block, 'except'))) ranges.add(text(except))
      }
    }
  }
  return ranges
}

export function validateNetworkPolicyUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateNetworkPolicy(obj, storedRanges(old))
}
