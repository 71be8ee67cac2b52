/**
 * Nodes as upstream's ValidateNode and ValidateNodeUpdate check them. A node
 * may carry its status from creation on, so both look at it: capacity and
 * allocatable quantities are never negative (whole numbers for counted
 * resources), taints are well formed and unique per key and effect (named
 * under `metadata.taints`, as upstream names them), pod CIDRs are ranges,
 * one per family. An update (the status writes too) keeps the pod CIDRs and
 * provider ID once set and the external ID always, and lists no address twice.
 *
 * Not read here: the deprecated taints and preferAvoidPods annotations,
 * which upstream refuses with Go's JSON decoder's words when they do not
 * decode; and the dynamic kubelet configuration (spec.configSource,
 * status.config), which a 1.32 server drops before validation (node-strategy.ts).
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, notSupported, required, kept } from '../../machinery/field.js'
import { GoLiteral, goPointerText, goQuote, goStrings } from '../../machinery/go-format.js'
import { isQualifiedName, isValidLabelValue } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { list, record, text } from '../columns/values.js'
import { goQuantity, quantityOf, quantityString, scaledValue } from './go-quantity.js'
import { cidrFamily, dualStack } from './ip-families.js'
import { CIDR_MESSAGE } from '../networking/addresses.js'
import { isIntegerResourceName } from './resource-names.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue, runAtOnce } from '../../machinery/time-slice.js'

type Obj = Record<string, unknown>

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute']
const CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'

const specOf = (node: KubeObject): Obj => record(node['spec'])
const statusOf = (node: KubeObject): Obj => record(node['status'])
const strings = (v: unknown): string[] => list(v).map(text)

/** `%#v` of a core.Taint. Go prints a set time pointer as its address; `&<time>` stands in for it. */
function goTaint(taint: Obj): GoLiteral {
  const added = goPointerText('v1.Time', taint['timeAdded'], (v) => text(v))
  return new GoLiteral(`core.Taint{Key:${goQuote(text(taint['key']))}, Value:${goQuote(text(taint['value']))}, Effect:${goQuote(text(taint['effect']))}, TimeAdded:${added}}`)
}

/** Upstream's validateNodeTaints. */
function* validateTaints(taints: unknown[], path: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const seen = new Map<string, Set<string>>()
  for (let i = 0; i < taints.length; i++) {
    if (checkpointDue()) yield
    const taint = record(taints[i])
    const at = path.index(i)
    const key = text(taint['key'])
    for (const msg of isQualifiedName(key)) errs.push(invalid(at.child('key'), key, msg))
    const value = text(taint['value'])
    const valueErrs = isValidLabelValue(value)
    if (valueErrs.length) errs.push(invalid(at.child('value'), value, valueErrs.join(';')))
    const effect = text(taint['effect'])
    if (!effect) errs.push(required(at.child('effect')))
    else if (!TAINT_EFFECTS.includes(effect)) errs.push(notSupported(at.child('effect'), effect, TAINT_EFFECTS))
    const keys = seen.get(effect) ?? new Set<string>()
    if (keys.has(key)) {
      errs.push(kept({ type: 'FieldValueDuplicate', field: String(at), value: goTaint(taint), detail: 'taints must be unique by key and effect pair' }))
      continue
    }
    keys.add(key)
    seen.set(effect, keys)
  }
  return errs
}

/** Upstream's ValidateResourceQuantityValue, for one resource of a node's capacity or allocatable. */
function quantityErrors(name: string, raw: unknown, path: FieldPath): FieldError[] {
  const q = quantityOf(raw)
  const errs: FieldError[] = []
  if (q.numerator < 0n) errs.push(invalid(path, quantityString(raw), 'must be greater than or equal to 0'))
  if (isIntegerResourceName(name) && scaledValue(q, -3) % 1000n !== 0n)
    errs.push(invalid(path, goQuantity(raw), 'must be an integer'))
  return errs
}

/** Upstream's ValidateNodeResources: named `status.capacity.<resource>`, with a dot. */
function validateNodeResources(node: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  for (const list of ['capacity', 'allocatable'] as const) {
    const path = fieldPath('status').child(list)
    for (const [name, raw] of Object.entries(record(statusOf(node)[list]))) appendAll(errs, quantityErrors(name, raw, path.child(name)))
  }
  return errs
}

function validatePodCIDRs(cidrs: string[]): FieldError[] {
  const path = fieldPath('spec').child('podCIDRs')
  const errs: FieldError[] = []
  cidrs.forEach((cidr, i) => {
    if (!cidrFamily(cidr)) errs.push(invalid(path.index(i), cidr, CIDR_MESSAGE))
  })
  if (cidrs.length <= 1) return errs
  const { dual, unparsed } = dualStack(cidrs, cidrFamily)
  if (unparsed !== undefined) {
    const bad = cidrs[unparsed] ?? ''
    errs.push({
      type: 'InternalError',
      field: String(path),
      detail: `invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[${unparsed}]: <nil> (invalid CIDR address: ${bad})`,
    })
  }
  if (!dual || cidrs.length > 2) errs.push(invalid(path, goStrings(cidrs), 'may specify no more than one CIDR for each IP family'))
  const seen = new Set<string>()
  cidrs.forEach((cidr, i) => {
    if (seen.has(cidr)) errs.push(kept({ type: 'FieldValueDuplicate', field: String(path.index(i)), value: cidr, detail: '' }))
    seen.add(cidr)
  })
  return errs
}

const taintsPath = fieldPath('metadata').child('taints')

/** Upstream's ValidateNode (the metadata rules run before, generically). */
/** A node's spec rules, in checkpointed steps: a body of 3 MB holds a million taints. */
export function* validateNodeInSteps(node: KubeObject): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const taints = list(specOf(node)['taints'])
  if (taints.length) yield* appendAllInSteps(errs, yield* validateTaints(taints, taintsPath))
  appendAll(errs, validateNodeResources(node))
  const cidrs = strings(specOf(node)['podCIDRs'])
  if (cidrs.length) appendAll(errs, validatePodCIDRs(cidrs))
  return errs
}

/** `%#v` of a core.NodeAddress. */
const goAddress = (address: Obj): GoLiteral => new GoLiteral(`core.NodeAddress{Type:${goQuote(text(address['type']))}, Address:${goQuote(text(address['address']))}}`)

/** Upstream's ValidateNodeUpdate: what any update must keep, the status writes included. */
export function validateNodeUpdate(node: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateNodeResources(node)
  const seen = new Set<string>()
  list(statusOf(node)['addresses']).forEach((a, i) => {
    const address = record(a)
    const key = JSON.stringify([text(address['type']), text(address['address'])])
    if (seen.has(key)) errs.push(kept({ type: 'FieldValueDuplicate', field: String(fieldPath('status').child('addresses').index(i)), value: goAddress(address), detail: '' }))
    seen.add(key)
  })
  const spec = specOf(node)
  const oldSpec = specOf(old)
  const oldCIDRs = strings(oldSpec['podCIDRs'])
  if (oldCIDRs.length > 0) {
    const cidrs = strings(spec['podCIDRs'])
    // One error for a list of another length, else one per changed entry, as upstream counts them.
    const changes = cidrs.length !== oldCIDRs.length ? 1 : oldCIDRs.filter((c, i) => c !== cidrs[i]).length
    for (let i = 0; i < changes; i++) errs.push(forbiddenField(fieldPath('spec').child('podCIDRs'), CIDR_CHANGE))
  }
  const oldProvider = text(oldSpec['providerID'])
  if (oldProvider && oldProvider !== text(spec['providerID']))
    errs.push(forbiddenField(fieldPath('spec').child('providerID'), 'node updates may not change providerID except from "" to valid'))
  const taints = list(spec['taints'])
  if (taints.length) appendAll(errs, runAtOnce(validateTaints(taints, taintsPath)))
  if (text(spec['externalID']) !== text(oldSpec['externalID'])) errs.push(forbiddenField(fieldPath('spec').child('externalID'), 'may not be updated'))
  return errs
}
