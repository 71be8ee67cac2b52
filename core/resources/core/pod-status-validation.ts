/**
 * What a write through `pods/<name>/status` must satisfy (upstream's
 * ValidatePodStatusUpdate at 1.32): condition types outside the system's
 * own are qualified names (named at `metadata.conditions[i].Type`, as
 * upstream names them), a new nominated node is a node name, the QoS class
 * never changes, a container that ended for good is not brought back, and
 * the pod and host addresses are IPs, at most one per family, none twice,
 * the first host address the one `hostIP` names.
 *
 * Rules on fields a 1.32 server drops before validation are left out: the
 * user identities in container statuses (SupplementalGroupsPolicy, alpha),
 * the allocated resources' health (ResourceHealthStatus, alpha) and the
 * resource claim statuses (DynamicResourceAllocation, off by default).
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, kept } from '../../machinery/field.js'
import { GoLiteral, goQuote } from '../../machinery/go-format.js'
import { isDNS1123Subdomain, isQualifiedName } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { list, record, text } from '../columns/values.js'
import { dualStack, ipFamily } from './ip-families.js'
import { IP_MESSAGE } from './service-validation.js'
import { parseIPSloppy } from './sloppy-ip.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized'])
const IMMUTABLE = 'field is immutable'
const NOT_RESTARTED = 'may not be transitioned to non-terminated state'

function validateConditionTypes(conditions: unknown): FieldError[] {
  const path = fieldPath('metadata').child('conditions')
  return list(conditions).flatMap((c, i) => {
    const type = text(record(c)['type'])
    if (SYSTEM_CONDITIONS.has(type)) return []
    return isQualifiedName(type).map((msg) => invalid(path.index(i).child('Type'), type, msg))
  })
}

const isTerminated = (containerStatus: Obj): boolean => record(containerStatus['state'])['terminated'] != null

/**
 * Upstream's ValidateContainerStateTransition: unless the pod restarts
 * always, a container whose stored status is terminated (and did not fail
 * under OnFailure, nor is a restartable init container) may not be written
 * back as waiting or running. The index is the stored status's.
 */
function stateTransitionErrors(written: unknown, stored: unknown, path: FieldPath, restartPolicy: string, restartable: (name: string) => boolean): FieldError[] {
  if (restartPolicy === 'Always') return []
  const errs: FieldError[] = []
  list(stored).forEach((before, i) => {
    const old = record(before)
    if (!isTerminated(old)) return
    const exitCode = record(record(old['state'])['terminated'])['exitCode']
    if (typeof exitCode === 'number' && exitCode !== 0 && restartPolicy === 'OnFailure') return
    if (restartable(text(old['name']))) return
    for (const after of list(written)) {
      const now = record(after)
      if (now['name'] === old['name'] && !isTerminated(now)) errs.push(forbiddenField(path.index(i).child('state'), NOT_RESTARTED))
    }
  })
  return errs
}

/** Init containers with `restartPolicy: Always` (sidecars) restart whatever the pod's policy. */
function restartableInitContainer(spec: Obj): (name: string) => boolean {
  return (name) => {
    const container = list(spec['initContainers']).map(record).find((c) => c['name'] === name)
    return container?.['restartPolicy'] === 'Always'
  }
}

/** `%#v` of a list of core.PodIP or core.HostIP, the value upstream shows for a refused list. */
function goAddressList(type: string, entries: unknown[]): GoLiteral {
  return new GoLiteral(`[]${type}{${entries.map((e) => goAddress(type, e).text).join(', ')}}`)
}

function goAddress(type: string, entry: unknown): GoLiteral {
  return new GoLiteral(`${type}{IP:${goQuote(text(record(entry)['ip']))}}`)
}

/** The errors of a list with more than one address: one of each family at most (two in all), and none twice. */
function multipleAddressErrors(entries: unknown[], path: FieldPath, type: string, duplicatesFirst: boolean): FieldError[] {
  const ips = entries.map((e) => text(record(e)['ip']))
  const familyErrs: FieldError[] = []
  const { dual, unparsed } = dualStack(ips, ipFamily)
  if (unparsed !== undefined)
    familyErrs.push({
      type: 'InternalError',
      field: String(path),
      detail: `failed to check for dual stack with error:invalid IP[${unparsed}]: ${ips[unparsed] ?? ''}`,
    })
  if (!dual || ips.length > 2) familyErrs.push(invalid(path, goAddressList(type, entries), 'may specify no more than one IP for each IP family'))
  const duplicateErrs: FieldError[] = []
  const seen = new Set<string>()
  ips.forEach((ip, i) => {
    if (seen.has(ip)) duplicateErrs.push(kept({ type: 'FieldValueDuplicate', field: String(path.index(i)), value: goAddress(type, entries[i]), detail: '' }))
    seen.add(ip)
  })
  return duplicatesFirst ? [...duplicateErrs, ...familyErrs] : [...familyErrs, ...duplicateErrs]
}

function validatePodIPs(status: Obj): FieldError[] {
  const path = fieldPath('status').child('podIPs')
  const entries = list(status['podIPs'])
  const errs: FieldError[] = []
  entries.forEach((e, i) => {
    const ip = text(record(e)['ip'])
    if (!parseIPSloppy(ip)) errs.push(invalid(path.index(i), ip, IP_MESSAGE))
  })
  if (entries.length > 1) appendAll(errs, multipleAddressErrors(entries, path, 'core.PodIP', false))
  return errs
}

function validateHostIPs(status: Obj): FieldError[] {
  const entries = list(status['hostIPs'])
  if (entries.length === 0) return []
  const path = fieldPath('status').child('hostIPs')
  const errs: FieldError[] = []
  const first = text(record(entries[0])['ip'])
  if (text(status['hostIP']) !== first) errs.push(invalid(path.index(0).child('ip'), first, 'must be equal to `hostIP`'))
  entries.forEach((e, i) => {
    const ip = text(record(e)['ip'])
    if (!parseIPSloppy(ip)) errs.push(invalid(path.index(i), ip, IP_MESSAGE))
  })
  // Upstream looks for repeated host addresses before it checks their families (the pod addresses the other way round).
  if (entries.length > 1) appendAll(errs, multipleAddressErrors(entries, path, 'core.HostIP', true))
  return errs
}

/**
 * The status rules proper; the metadata rules (generic, and a pod's own
 * annotations) run before them. The spec is the stored one: a status
 * write cannot change it.
 */
export function validatePodStatusUpdate(pod: KubeObject, old: KubeObject): FieldError[] {
  const status = record(pod['status'])
  const oldStatus = record(old['status'])
  const oldSpec = record(old['spec'])
  const path = fieldPath('status')
  const errs = validateConditionTypes(status['conditions'])
  const nominated = text(status['nominatedNodeName'])
  if (nominated && nominated !== text(oldStatus['nominatedNodeName']))
    for (const msg of isDNS1123Subdomain(nominated)) errs.push(invalid(path.child('nominatedNodeName'), nominated, msg))
  const qos = text(status['qosClass'])
  if (qos !== text(oldStatus['qosClass'])) errs.push(invalid(path.child('qosClass'), qos, IMMUTABLE))
  const restartPolicy = text(oldSpec['restartPolicy'])
  const never = (): boolean => false
  appendAll(errs, stateTransitionErrors(status['containerStatuses'], oldStatus['containerStatuses'], path.child('containerStatuses'), restartPolicy, never))
  appendAll(errs, stateTransitionErrors(status['initContainerStatuses'], oldStatus['initContainerStatuses'], path.child('initContainerStatuses'), restartPolicy, restartableInitContainer(oldSpec)))
  // The node agent never restarts an ephemeral container: they are held as under restartPolicy Never.
  appendAll(errs, stateTransitionErrors(status['ephemeralContainerStatuses'], oldStatus['ephemeralContainerStatuses'], path.child('ephemeralContainerStatuses'), 'Never', never))
  appendAll(errs, validatePodIPs(status))
  appendAll(errs, validateHostIPs(status))
  return errs
}

/**
 * The status strategy's own preparation: a write without a QoS class keeps
 * the stored one (older node agents dropped it from pods they refused).
 */
export function preparePodStatusUpdate(pod: KubeObject, old: KubeObject): void {
  const status = record(pod['status'])
  if (!text(status['qosClass']) && text(record(old['status'])['qosClass'])) {
    status['qosClass'] = record(old['status'])['qosClass']
    pod['status'] = status
  }
}
