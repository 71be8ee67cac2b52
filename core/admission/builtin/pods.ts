/**
 * What the pod plugins share: which requests are about a pod itself, the
 * pod's spec, its containers, and upstream's admission.NewForbidden.
 */
import { forbidden, StatusError } from '../../machinery/status-error.js'
import { isPlainObject } from '../../machinery/object.js'
import type { AdmissionAttributes, AdmissionOperation } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import type { ValidatingAdmission } from '../validating.js'

export type Obj = Record<string, unknown>

/** A handles() for the given operations (upstream's admission.NewHandler). */
export const on =
  (...operations: AdmissionOperation[]) =>
  (operation: AdmissionOperation): boolean =>
    operations.includes(operation)

export const isResource = (a: AdmissionAttributes, group: string, resource: string): boolean =>
  a.entry.group === group && a.entry.resource === resource

/** The spec of the pod a request writes, not of a subresource (`allow` names subresources that count), made an object if absent. */
export function podSpecOf(a: AdmissionAttributes, allow: readonly string[] = []): Obj | undefined {
  // The resource before the object: reading it makes the validating step's copy.
  if (!isResource(a, '', 'pods')) return undefined
  const pod = a.object
  if (!pod) return undefined
  if (a.subresource && !allow.includes(a.subresource)) return undefined
  if (!isPlainObject(pod['spec'])) pod['spec'] = {}
  return pod['spec'] as Obj
}

export const objects = (value: unknown): Obj[] => (Array.isArray(value) ? value.filter(isPlainObject) : [])

export const specOf = (obj: unknown): Obj => (isPlainObject(obj) && isPlainObject(obj['spec']) ? obj['spec'] : {})

export const stringMap = (value: unknown): Record<string, string> =>
  isPlainObject(value) ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string')) : {}

/** Init, regular and ephemeral containers with their field path, as upstream's VisitContainersWithPath walks them. */
export function containersWithPath(spec: Obj): { container: Obj; path: string }[] {
  return (['initContainers', 'containers', 'ephemeralContainers'] as const).flatMap((field) =>
    objects(spec[field]).map((container, i) => ({ container, path: `spec.${field}[${i}]` })),
  )
}

/** Upstream's admission.NewForbidden: 403 about the resource written, named by the request or by the object. */
export function refuse(a: AdmissionAttributes, why: string): StatusError {
  const name = a.name || (typeof a.object?.metadata?.name === 'string' ? a.object.metadata.name : '')
  return forbidden({ group: a.entry.group, resource: a.entry.resource }, name, why)
}

/**
 * An error upstream's plugin returns unwrapped: its handlers answer such an
 * error with 500 and the bare message, not with "Internal error occurred".
 */
export function bareError(message: string): StatusError {
  return new StatusError(500, 'InternalError', message)
}

/** A plugin with a half in each phase. */
export type BothPhases = MutatingAdmission & ValidatingAdmission
