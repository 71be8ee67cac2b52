/**
 * A namespace's phase through `namespaces/<name>/status` (upstream's
 * ValidateNamespaceStatusUpdate): Active while it is not being deleted,
 * Terminating once it is. Upstream names the field `status.Phase`, with
 * its Go name. An empty phase was defaulted to Active before this runs.
 */
import { type FieldError, fieldPath, invalid } from '../../machinery/field.js'
import type { KubeObject } from '../../machinery/object.js'
import { record, text } from '../columns/values.js'

export function validateNamespaceStatusUpdate(namespace: KubeObject): FieldError[] {
  const phase = text(record(namespace['status'])['phase'])
  const path = fieldPath('status').child('Phase')
  if (!namespace.metadata.deletionTimestamp) {
    return phase === 'Active' ? [] : [invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")]
  }
  return phase === 'Terminating' ? [] : [invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
}

/** Upstream's SetDefaults_NamespaceStatus: a status without a phase is Active. */
export function defaultNamespacePhase(namespace: KubeObject): void {
  const status = namespace['status']
  if (status === undefined || status === null) namespace['status'] = { phase: 'Active' }
  else if (typeof status === 'object' && !Array.isArray(status) && !(status as Record<string, unknown>)['phase']) (status as Record<string, unknown>)['phase'] = 'Active'
}
