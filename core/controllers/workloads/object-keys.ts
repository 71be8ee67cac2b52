/**
 * What the workload controllers share about objects: the `namespace/name`
 * keys their queues hold, the controlling owner of an object, and the
 * answers of a write that only mean "look again" (409) or "already gone" (404).
 */
import type { KubeObject, OwnerReference } from '../../machinery/object.js'
import { StatusError } from '../../machinery/status-error.js'

export function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/')
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

/** The owner reference marked `controller: true` (upstream's metav1.GetControllerOf). */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true)
}

export const isConflict = (err: unknown): boolean => err instanceof StatusError && err.code === 409
export const isNotFound = (err: unknown): boolean => err instanceof StatusError && err.code === 404

/** A condition as the batch and apps APIs write it. */
export interface Condition {
  type: string
  status: 'True' | 'False' | 'Unknown'
  reason?: string
  message?: string
  lastProbeTime?: string
  lastTransitionTime?: string
}

export function conditionsOf(status: unknown): Condition[] {
  const list = (status as { conditions?: unknown } | undefined)?.conditions
  return Array.isArray(list) ? (list as Condition[]) : []
}

export function hasTrueCondition(status: unknown, type: string): boolean {
  return conditionsOf(status).some((c) => c.type === type && c.status === 'True')
}
