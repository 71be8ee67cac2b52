/**
 * What a write through the `status` subresource of a workload controller's
 * object must satisfy (upstream's ValidateDeploymentStatusUpdate,
 * ValidateReplicaSetStatusUpdate, ValidateReplicationControllerStatusUpdate,
 * ValidateStatefulSetStatusUpdate and ValidateDaemonSetStatusUpdate): counts
 * that are never negative, parts of the replicas never larger than the
 * whole, and a collision count that only grows. Only the status is checked,
 * as the status strategies do: the spec is the stored one.
 */
import { fieldPath, type FieldError, type FieldPath, invalid } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { nonNegative } from './selector.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const STATUS = fieldPath('status')
const NOT_ABOVE_REPLICAS = 'cannot be greater than status.replicas'

function statusOf(obj: KubeObject): Obj {
  return isPlainObject(obj['status']) ? obj['status'] : {}
}

/** A counter as the Go struct holds it: 0 when absent. */
function count(status: Obj, key: string): number {
  const v = status[key]
  return typeof v === 'number' ? v : 0
}

function nonNegativeCounts(status: Obj, keys: readonly string[], path: FieldPath): FieldError[] {
  return keys.flatMap((key) => nonNegative(status[key], path.child(key)))
}

/** Each named part larger than status.replicas, in the order given. */
function partsAboveReplicas(status: Obj, keys: readonly string[], path: FieldPath): FieldError[] {
  const replicas = count(status, 'replicas')
  return keys.filter((key) => count(status, key) > replicas).map((key) => invalid(path.child(key), count(status, key), NOT_ABOVE_REPLICAS))
}

/** upstream's IsDecremented on status.collisionCount: lower than before, or dropped while it was set. */
function collisionCountDecremented(obj: KubeObject, old: KubeObject): FieldError[] {
  const now = statusOf(obj)['collisionCount']
  const before = statusOf(old)['collisionCount']
  if (typeof before !== 'number') return []
  if (typeof now === 'number' && now >= before) return []
  return [invalid(STATUS.child('collisionCount'), typeof now === 'number' ? now : 0, 'cannot be decremented')]
}

/** upstream's ValidateDeploymentStatus. */
function validateDeploymentStatus(status: Obj, path: FieldPath): FieldError[] {
  const errs = nonNegativeCounts(status, ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'collisionCount'], path)
  appendAll(errs, partsAboveReplicas(status, ['updatedReplicas', 'readyReplicas', 'availableReplicas'], path))
  const available = count(status, 'availableReplicas')
  if (available > count(status, 'readyReplicas')) errs.push(invalid(path.child('availableReplicas'), available, 'cannot be greater than readyReplicas'))
  return errs
}

export function validateDeploymentStatusUpdate(deployment: KubeObject, old: KubeObject): FieldError[] {
  return [...validateDeploymentStatus(statusOf(deployment), STATUS), ...collisionCountDecremented(deployment, old)]
}

/** upstream's ValidateReplicaSetStatus, which ValidateReplicationControllerStatus repeats word for word. */
function validateReplicaSetStatus(status: Obj, path: FieldPath): FieldError[] {
  const errs = nonNegativeCounts(status, ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'], path)
  appendAll(errs, partsAboveReplicas(status, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'], path))
  const available = count(status, 'availableReplicas')
  if (available > count(status, 'readyReplicas')) errs.push(invalid(path.child('availableReplicas'), available, 'cannot be greater than readyReplicas'))
  return errs
}

export function validateReplicaSetStatusUpdate(replicaSet: KubeObject): FieldError[] {
  return validateReplicaSetStatus(statusOf(replicaSet), STATUS)
}

/** A ReplicationController's status is a ReplicaSet's, checked the same way. */
export const validateReplicationControllerStatusUpdate = validateReplicaSetStatusUpdate

/** upstream's ValidateStatefulSetStatus. */
function validateStatefulSetStatus(status: Obj, path: FieldPath): FieldError[] {
  const errs = nonNegativeCounts(status, ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount'], path)
  appendAll(errs, partsAboveReplicas(status, ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'], path))
  const available = count(status, 'availableReplicas')
  if (available > count(status, 'readyReplicas')) errs.push(invalid(path.child('availableReplicas'), available, 'cannot be greater than status.readyReplicas'))
  return errs
}

export function validateStatefulSetStatusUpdate(statefulSet: KubeObject, old: KubeObject): FieldError[] {
  return [...validateStatefulSetStatus(statusOf(statefulSet), STATUS), ...collisionCountDecremented(statefulSet, old)]
}

/** upstream's validateDaemonSetStatus: every counter non-negative. */
const DAEMON_SET_COUNTS = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
] as const

export function validateDaemonSetStatusUpdate(daemonSet: KubeObject, old: KubeObject): FieldError[] {
  return [...nonNegativeCounts(statusOf(daemonSet), DAEMON_SET_COUNTS, STATUS), ...collisionCountDecremented(daemonSet, old)]
}
