/** The shape every stored API object shares; the rest of an object is per-kind. */

export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  finalizers?: string[]
  managedFields?: unknown[]
  selfLink?: string
}

export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [field: string]: unknown
}

export interface ListMeta {
  resourceVersion?: string
  continue?: string
  remainingItemCount?: number
}

export interface KubeList {
  apiVersion: string
  kind: string
  metadata: ListMeta
  items: KubeObject[]
}

/** The identity a request runs as (upstream's user.Info). */
export interface UserInfo {
  username: string
  uid?: string
  groups: string[]
  extra?: Record<string, string[]>
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A metav1.Time as it goes on the wire: RFC 3339 in UTC, whole seconds. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z')
}

/** Deep copy of JSON data; stored objects never share structure with callers. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value)
}
