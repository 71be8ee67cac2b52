/**
 * The rules of a CSINode (upstream's ValidateCSINode and its update rule):
 * each driver is named as a CSI driver is and listed once, has a node ID of
 * at most 256 bytes, a non-negative volume count, and distinct qualified
 * topology keys. A driver already registered keeps what it registered with:
 * an update may add or remove drivers, not change one.
 */
import { utf8Length } from '../../machinery/utf8-length.js'
import { duplicate, type FieldError, type FieldPath, fieldPath, invalid, required } from '../../machinery/field.js'
import { GoLiteral, goPointerText, goQuote, goStringSliceText } from '../../machinery/go-format.js'
import { isQualifiedName } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { semanticEqual } from '../apps/selector.js'
import { list, record, text } from '../columns/values.js'
import { validateCSIDriverName } from './csi-driver-name.js'
import { appendAll } from '../../machinery/append-all.js'

/** Upstream's strategy allows the longer node IDs (AllowLongNodeID). */
const MAX_NODE_ID_BYTES = 256

function validateTopologyKeys(keys: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  // Upstream reports these at the driver's path, not the key's.
  for (const k of list(keys)) {
    const key = text(k)
    if (key === '') errs.push(required(path))
    if (seen.has(key)) errs.push(duplicate(path, key))
    seen.add(key)
    for (const msg of isQualifiedName(key)) errs.push(invalid(path, key, msg))
  }
  return errs
}

function validateDriver(driver: Record<string, unknown>, path: FieldPath, names: Set<string>): FieldError[] {
  const name = text(driver['name'])
  const errs = validateCSIDriverName(name, path.child('name'))
  const nodeID = text(driver['nodeID'])
  if (nodeID === '') errs.push(required(path.child('nodeID')))
  if (utf8Length(nodeID) > MAX_NODE_ID_BYTES)
    errs.push(invalid(path.child('nodeID'), nodeID, `must be ${MAX_NODE_ID_BYTES} characters or less`))
  const count = record(driver['allocatable'])['count']
  if (typeof count === 'number' && count < 0)
    errs.push(invalid(path.child('allocatable').child('count'), count, 'must be greater than or equal to 0'))
  if (names.has(name)) errs.push(duplicate(path.child('name'), name))
  names.add(name)
  appendAll(errs, validateTopologyKeys(driver['topologyKeys'], path))
  return errs
}

export function validateCSINode(node: KubeObject): FieldError[] {
  const names = new Set<string>()
  const path = fieldPath('spec').child('drivers')
  return list(record(node['spec'])['drivers']).flatMap((d, i) => validateDriver(record(d), path.index(i), names))
}

/** `%#v` of a storage.CSINodeDriver, the value upstream shows for a changed one. */
function goDriver(driver: Record<string, unknown>): GoLiteral {
  const allocatable = goPointerText('storage.VolumeNodeResources', driver['allocatable'], () => '{...}')
  return new GoLiteral(
    `storage.CSINodeDriver{Name:${goQuote(text(driver['name']))}, NodeID:${goQuote(text(driver['nodeID']))}, TopologyKeys:${goStringSliceText(driver['topologyKeys'])}, Allocatable:${allocatable}}`,
  )
}

/**
 * Upstream's update rule repeats the create checks after its strategy ran
 * them: each error comes twice in the causes, once in the message. At 1.32
 * a driver's allocatable count is as fixed as the rest of it.
 */
export function validateCSINodeUpdate(node: KubeObject, old: KubeObject): FieldError[] {
  const errs = [...validateCSINode(node), ...validateCSINode(node)]
  const drivers = list(record(node['spec'])['drivers']).map(record)
  for (const oldDriver of list(record(old['spec'])['drivers']).map(record))
    for (const driver of drivers)
      if (text(driver['name']) === text(oldDriver['name']) && !semanticEqual(driver, oldDriver))
        errs.push(invalid(fieldPath('spec').child('drivers'), goDriver(driver), 'field is immutable'))
  return errs
}
