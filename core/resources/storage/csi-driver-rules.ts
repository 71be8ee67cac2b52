/**
 * The rules of a CSIDriver's spec (upstream's validateCSIDriverSpec and
 * ValidateCSIDriverUpdate, with storage/v1's defaults): the flags the
 * defaults fill are set, fsGroupPolicy and the volume lifecycle modes are
 * known values, token requests name each audience once and ask for 10
 * minutes to 2^32 seconds. Whether volumes are attached and which lifecycle
 * modes the driver serves stay as created.
 */
import { duplicate, type FieldError, fieldPath, type FieldPath, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import type { KubeObject } from '../../machinery/object.js'
import { isPlainObject } from '../../machinery/object.js'
import { immutableField } from '../apps/selector.js'
import { list, record, text } from '../columns/values.js'
import { appendAll } from '../../machinery/append-all.js'

/** Sorted, as upstream lists a string set. */
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType']
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral']
const MIN_TOKEN_SECONDS = 10 * 60
const MAX_TOKEN_SECONDS = 2 ** 32


/**
 * storage/v1 defaults. seLinuxMount is defaulted as at 1.32, where its
 * feature (SELinuxMountReadWriteOncePod) is beta and on.
 */
export function applyCSIDriverDefaults(driver: KubeObject): void {
  const spec = isPlainObject(driver['spec']) ? driver['spec'] : (driver['spec'] = {})
  const flags: [string, boolean][] = [
    ['attachRequired', true],
    ['podInfoOnMount', false],
    ['storageCapacity', false],
  ]
  for (const [field, value] of flags) if (!isSet(spec[field])) spec[field] = value
  if (!isSet(spec['fsGroupPolicy'])) spec['fsGroupPolicy'] = 'ReadWriteOnceWithFSType'
  if (list(spec['volumeLifecycleModes']).length === 0) spec['volumeLifecycleModes'] = ['Persistent']
  if (!isSet(spec['requiresRepublish'])) spec['requiresRepublish'] = false
  if (!isSet(spec['seLinuxMount'])) spec['seLinuxMount'] = false
}

function validateTokenRequests(requests: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const audiences = new Set<string>()
  list(requests).forEach((r, i) => {
    const request = record(r)
    const at = path.index(i)
    const audience = text(request['audience'])
    if (audiences.has(audience)) return void errs.push(duplicate(at.child('audience'), audience))
    audiences.add(audience)
    const seconds = request['expirationSeconds']
    if (typeof seconds !== 'number') return
    if (seconds < MIN_TOKEN_SECONDS) errs.push(invalid(at.child('expirationSeconds'), seconds, 'may not specify a duration less than 10 minutes'))
    if (seconds > MAX_TOKEN_SECONDS) errs.push(invalid(at.child('expirationSeconds'), seconds, 'may not specify a duration larger than 2^32 seconds'))
  })
  return errs
}

function validateSpec(spec: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  // Upstream's path for attachRequired is spelt `attachedRequired`.
  if (!isSet(spec['attachRequired'])) errs.push(required(path.child('attachedRequired')))
  if (!isSet(spec['podInfoOnMount'])) errs.push(required(path.child('podInfoOnMount')))
  if (!isSet(spec['storageCapacity'])) errs.push(required(path.child('storageCapacity')))
  const policy = spec['fsGroupPolicy']
  if (isSet(policy) && !FS_GROUP_POLICIES.includes(text(policy))) errs.push(notSupported(path.child('fsGroupPolicy'), text(policy), FS_GROUP_POLICIES))
  appendAll(errs, validateTokenRequests(spec['tokenRequests'], path.child('tokenRequests')))
  for (const mode of list(spec['volumeLifecycleModes']))
    if (!LIFECYCLE_MODES.includes(text(mode))) errs.push(notSupported(path.child('volumeLifecycleModes'), text(mode), LIFECYCLE_MODES))
  if (!isSet(spec['seLinuxMount'])) errs.push(required(path.child('seLinuxMount')))
  return errs
}

export function validateCSIDriver(driver: KubeObject): FieldError[] {
  return validateSpec(record(driver['spec']), fieldPath('spec'))
}

/** A driver stored before these defaults existed reads back with them, as upstream defaults what it reads. */
function storedSpec(old: KubeObject): Record<string, unknown> {
  const copy: KubeObject = { ...old, spec: { ...record(old['spec']) } }
  applyCSIDriverDefaults(copy)
  return record(copy['spec'])
}

export function validateCSIDriverUpdate(driver: KubeObject, old: KubeObject): FieldError[] {
  const spec = record(driver['spec'])
  const oldSpec = storedSpec(old)
  return [
    ...validateCSIDriver(driver),
    ...immutableField(spec['attachRequired'], oldSpec['attachRequired'], fieldPath('spec').child('attachedRequired')),
    ...immutableField(spec['volumeLifecycleModes'], oldSpec['volumeLifecycleModes'], fieldPath('spec').child('volumeLifecycleModes'), (v) =>
      goStrings(list(v).map(text), 'storage.VolumeLifecycleMode'),
    ),
  ]
}
