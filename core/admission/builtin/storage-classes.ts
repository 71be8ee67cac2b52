/**
 * What the storage plugins read of claims and classes: a claim's class as
 * upstream's helpers find it (the beta annotation first, then
 * `spec.storageClassName`) and the default class of a cluster.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

/** The annotation that still names a claim's class before `spec.storageClassName`. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class'
const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class']

export const specOf = (obj: KubeObject | undefined): Record<string, unknown> => (obj && isPlainObject(obj['spec']) ? obj['spec'] : {})

/** Whether the claim asked for a class, even the empty one (which means none). */
export function claimHasClass(claim: KubeObject): boolean {
  if (claim.metadata.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] !== undefined) return true
  const name = specOf(claim)['storageClassName']
  return name !== undefined && name !== null
}

/** The claim's class name, '' for none. */
export function claimClass(claim: KubeObject): string {
  const annotated = claim.metadata.annotations?.[BETA_STORAGE_CLASS_ANNOTATION]
  if (annotated !== undefined) return annotated
  const name = specOf(claim)['storageClassName']
  return typeof name === 'string' ? name : ''
}

const createdAt = (o: KubeObject): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0

/**
 * The default among `classes` (annotation `isDefault` true): when several
 * are, the newest, then the first by name, as upstream picks since v1.26
 * instead of refusing the claim.
 */
export function newestDefault(classes: readonly KubeObject[], isDefault: (o: KubeObject) => boolean): KubeObject | undefined {
  const defaults = classes.filter(isDefault)
  defaults.sort((a, b) => createdAt(b) - createdAt(a) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))
  return defaults[0]
}

export const isDefaultStorageClass = (o: KubeObject): boolean => DEFAULT_CLASS_ANNOTATIONS.some((key) => o.metadata.annotations?.[key] === 'true')
