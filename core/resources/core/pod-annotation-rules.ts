/**
 * The annotations upstream reads as part of a pod (ValidatePodSpecificAnnotations
 * and ValidatePodSpecificAnnotationUpdates): a mirror pod names its node, a
 * deletion cost is a 32-bit integer, seccomp annotations name a profile,
 * AppArmor annotations name a container of the pod and a profile; the
 * mirror and AppArmor annotations are set at creation and never changed.
 *
 * The deprecated tolerations annotation is not read here: upstream refuses
 * one that does not decode with Go's JSON decoder's own words.
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid } from '../../machinery/field.js'
import type { KubeObject } from '../../machinery/object.js'
import { list, record, text } from '../columns/values.js'
import { MIRROR_POD_ANNOTATION } from './pod-subresource-meta.js'
import { appendAll } from '../../machinery/append-all.js'

const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost'
const SECCOMP_POD = 'seccomp.security.alpha.kubernetes.io/pod'
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/'
const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/'
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 }

type Annotations = Record<string, unknown>

const annotationsOf = (pod: KubeObject): Annotations => record(pod.metadata.annotations)

/** Upstream's GetDeletionCostFromPodAnnotations succeeds: absent, or a decimal int32 without a plus sign or leading zeros. */
export function isValidDeletionCost(annotations: Annotations): boolean {
  if (!(DELETION_COST in annotations)) return true
  const value = text(annotations[DELETION_COST])
  if (!/^(-\d+|0|[1-9]\d*)$/.test(value)) return false
  const n = Number(value)
  return Number.isInteger(n) && n >= INT32.min && n <= INT32.max
}

/** A relative path without `..` steps (upstream's validateLocalDescendingPath). */
function localDescendingPathErrors(target: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (target.startsWith('/')) errs.push(invalid(path, target, 'must be a relative path'))
  if (target.split('/').includes('..')) errs.push(invalid(path, target, "must not contain '..'"))
  return errs
}

function seccompProfileErrors(profile: string, path: FieldPath): FieldError[] {
  if (['runtime/default', 'docker/default', 'unconfined'].includes(profile)) return []
  if (profile.startsWith('localhost/')) return localDescendingPathErrors(profile.slice('localhost/'.length), path)
  return [invalid(path, profile, 'must be a valid seccomp profile')]
}

function containerNames(spec: Record<string, unknown>): Set<string> {
  const names = new Set<string>()
  for (const key of ['initContainers', 'containers', 'ephemeralContainers'])
    for (const c of list(spec[key])) names.add(text(record(c)['name']))
  return names
}

/** Upstream's ValidatePodSpecificAnnotations, for the pod's annotations as written. */
export function validatePodAnnotations(pod: KubeObject, allowInvalidDeletionCost: boolean): FieldError[] {
  const path = fieldPath('metadata').child('annotations')
  const annotations = annotationsOf(pod)
  const spec = record(pod['spec'])
  const errs: FieldError[] = []
  if (MIRROR_POD_ANNOTATION in annotations && !text(spec['nodeName']))
    errs.push(invalid(path.key(MIRROR_POD_ANNOTATION), text(annotations[MIRROR_POD_ANNOTATION]), 'must set spec.nodeName if mirror pod annotation is set'))
  if (!allowInvalidDeletionCost && !isValidDeletionCost(annotations))
    errs.push(invalid(path.key(DELETION_COST), text(annotations[DELETION_COST]), 'must be a 32bit integer'))
  // Upstream names these two with a dot, not in brackets.
  if (SECCOMP_POD in annotations) appendAll(errs, seccompProfileErrors(text(annotations[SECCOMP_POD]), path.child(SECCOMP_POD)))
  for (const [key, value] of Object.entries(annotations))
    if (key.startsWith(SECCOMP_CONTAINER_PREFIX)) appendAll(errs, seccompProfileErrors(text(value), path.child(key)))
  // Only a pod with AppArmor annotations has its container names gathered: a spec holds as many as a body allows.
  let names: Set<string> | undefined
  for (const [key, value] of Object.entries(annotations)) {
    if (!key.startsWith(APPARMOR_PREFIX)) continue
    const container = key.slice(APPARMOR_PREFIX.length)
    names ??= containerNames(spec)
    if (!names.has(container)) errs.push(invalid(path.key(key), container, 'container not found'))
    const profile = text(value)
    if (profile !== '' && profile !== 'runtime/default' && profile !== 'unconfined' && !profile.startsWith('localhost/'))
      errs.push(invalid(path.key(key), profile, `invalid AppArmor profile name: ${JSON.stringify(profile)}`))
  }
  return errs
}

/**
 * Upstream's ValidatePodSpecificAnnotationUpdates: the mirror and AppArmor
 * annotations neither change, go nor come, then the rules above; a deletion
 * cost already invalid in the stored pod may stay so.
 */
export function validatePodAnnotationUpdates(pod: KubeObject, old: KubeObject): FieldError[] {
  const path = fieldPath('metadata').child('annotations')
  const written = annotationsOf(pod)
  const stored = annotationsOf(old)
  const errs: FieldError[] = []
  for (const [key, before] of Object.entries(stored)) {
    if (key in written && written[key] === before) continue
    if (key.startsWith(APPARMOR_PREFIX)) errs.push(forbiddenField(path.key(key), 'may not remove or update AppArmor annotations'))
    if (key === MIRROR_POD_ANNOTATION) errs.push(forbiddenField(path.key(key), 'may not remove or update mirror pod annotation'))
  }
  for (const key of Object.keys(written)) {
    if (key in stored) continue
    if (key.startsWith(APPARMOR_PREFIX)) errs.push(forbiddenField(path.key(key), 'may not add AppArmor annotations'))
    if (key === MIRROR_POD_ANNOTATION) errs.push(forbiddenField(path.key(key), 'may not add mirror pod annotation'))
  }
  appendAll(errs, validatePodAnnotations(pod, !isValidDeletionCost(stored)))
  return errs
}
