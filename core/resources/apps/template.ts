/**
 * The pod template of a controller whose pods run for ever (ReplicaSet,
 * Deployment, DaemonSet, ReplicationController): a valid template whose pods
 * restart always and carry no deadline.
 */
import { type FieldError, type FieldPath, forbiddenField, notSupported } from '../../machinery/field.js'
import { applyPodSpecDefaultsInSteps } from '../core/pod-spec-defaults.js'
import { type PodSpecValidationOptions, validatePodTemplateSpecInSteps } from '../core/pod-spec-validation.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { isPlainObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

/** The object at `parent[key]`, created empty when absent (upstream's structs are never nil). */
export function objectAt(parent: Obj, key: string): Obj {
  const value = parent[key]
  if (isPlainObject(value)) return value
  const created: Obj = {}
  parent[key] = created
  return created
}

/** Sets `obj[key]` when the client left it out, as upstream's defaulters fill nil pointers. */
export function setIfAbsent(obj: Obj, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value
}

/** The object's spec, created when absent. */
export const specOf = (obj: Obj): Obj => objectAt(obj, 'spec')

/**
 * Fills the defaults of `holder.template.spec`, creating the template as
 * upstream's struct would be, in checkpointed steps: a template holds as
 * many containers as a pod.
 */
export function defaultTemplateInSteps(holder: Obj): Checkpointed<void> {
  return applyPodSpecDefaultsInSteps(objectAt(objectAt(holder, 'template'), 'spec'))
}

/** The template's pod spec, or an empty one. */
export function podSpecOf(template: unknown): Obj {
  const spec = isPlainObject(template) ? template['spec'] : undefined
  return isPlainObject(spec) ? spec : {}
}

/**
 * Upstream's template rules for long-running controllers; `kind` is the word
 * its message uses (Deployments share the ReplicaSet's).
 */
export function* validateLongRunningTemplateInSteps(template: unknown, path: FieldPath, kind: string, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = yield* validatePodTemplateSpecInSteps(template, path, opts)
  appendAll(errs, alwaysRestartRules(template, path, kind))
  return errs
}

/** restartPolicy Always, no activeDeadlineSeconds: what every long-running controller's pods need. */
export function alwaysRestartRules(template: unknown, path: FieldPath, kind: string): FieldError[] {
  const spec = podSpecOf(template)
  const errs: FieldError[] = []
  const policy = spec['restartPolicy'] ?? ''
  if (policy !== 'Always') errs.push(notSupported(path.child('spec').child('restartPolicy'), policy, ['Always']))
  if (spec['activeDeadlineSeconds'] !== undefined && spec['activeDeadlineSeconds'] !== null)
    errs.push(forbiddenField(path.child('spec').child('activeDeadlineSeconds'), `activeDeadlineSeconds in ${kind} is not Supported`))
  return errs
}
