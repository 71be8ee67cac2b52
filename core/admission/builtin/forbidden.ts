/**
 * The refusal most plugins answer with (upstream's admission.NewForbidden):
 * 403 Forbidden naming the resource and the object, the object's
 * generateName when it has no name yet, or `Unknown`.
 */
import { forbidden, type StatusError } from '../../machinery/status-error.js'
import type { AdmissionAttributes } from '../attributes.js'

export function admissionForbidden(a: AdmissionAttributes, why: string): StatusError {
  const meta = a.object?.metadata
  const name = a.name || meta?.name || meta?.generateName || 'Unknown'
  return forbidden({ group: a.entry.group, resource: a.entry.resource }, name, why)
}

/** Whether the request is for `group`/`resource` (any version), and which subresource. */
export const isResource = (a: AdmissionAttributes, group: string, resource: string, subresource = ''): boolean =>
  a.entry.group === group && a.entry.resource === resource && (a.subresource ?? '') === subresource
