/**
 * A write through a HorizontalPodAutoscaler's `status` (upstream's
 * ValidateHorizontalPodAutoscalerStatusUpdate): the replica counts it reports
 * are never negative. Both versions name them alike, so the check reads the
 * object as written.
 */
import { fieldPath, type FieldError } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { nonNegative } from '../apps/selector.js'

export function validateHpaStatusUpdate(hpa: KubeObject): FieldError[] {
  const status = isPlainObject(hpa['status']) ? hpa['status'] : {}
  const path = fieldPath('status')
  return [...nonNegative(status['currentReplicas'], path.child('currentReplicas')), ...nonNegative(status['desiredReplicas'], path.child('desiredReplicas'))]
}
