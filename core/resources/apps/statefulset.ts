/**
 * StatefulSets: upstream's apps/v1 defaults, ValidateStatefulSetSpec and the
 * update rule that leaves only a few spec fields mutable. Like upstream, the
 * template's pod spec is not validated here beyond its restart policy and
 * deadline (its volumes may name claims from volumeClaimTemplates).
 */
import { fieldPath, type FieldError, type FieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import { GoLiteral, goIntOrStringText, goStrategy } from '../../machinery/go-format.js'
import { validateAnnotations, validateLabels } from '../../validation/object-meta.js'
import { objects } from '../core/pod-spec-defaults.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { intOrPercentValue, notMoreThan100Percent, validatePositiveIntOrPercent } from './int-or-percent.js'
import { nonNegative, semanticEqual, validateControllerSelectorInSteps } from './selector.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { alwaysRestartRules, defaultTemplateInSteps, objectAt, setIfAbsent, specOf } from './template.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const RETENTION_POLICIES = ['Retain', 'Delete']

/** The spec fields an update may change; anything else is fixed at creation. */
const MUTABLE_FIELDS = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']
const UPDATE_FORBIDDEN =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"

export function* applyStatefulSetDefaultsInSteps(sts: KubeObject): Checkpointed<void> {
  const spec = specOf(sts)
  if (!spec['podManagementPolicy']) spec['podManagementPolicy'] = 'OrderedReady'
  const strategy = objectAt(spec, 'updateStrategy')
  if (!strategy['type']) {
    strategy['type'] = 'RollingUpdate'
    objectAt(strategy, 'rollingUpdate')
  }
  if (strategy['type'] === 'RollingUpdate' && isPlainObject(strategy['rollingUpdate'])) setIfAbsent(strategy['rollingUpdate'], 'partition', 0)
  const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy')
  if (!retention['whenDeleted']) retention['whenDeleted'] = 'Retain'
  if (!retention['whenScaled']) retention['whenScaled'] = 'Retain'
  setIfAbsent(spec, 'replicas', 1)
  setIfAbsent(spec, 'revisionHistoryLimit', 10)
  yield* defaultTemplateInSteps(spec)
  // The claim templates get a claim's defaults.
  for (const claim of objects(spec['volumeClaimTemplates'])) {
    if (!objectAt(claim, 'spec')['volumeMode']) objectAt(claim, 'spec')['volumeMode'] = 'Filesystem'
    if (!objectAt(claim, 'status')['phase']) objectAt(claim, 'status')['phase'] = 'Pending'
  }
}

function validatePodManagementPolicy(policy: unknown, path: FieldPath): FieldError[] {
  if (!policy) return [required(path)]
  return policy === 'OrderedReady' || policy === 'Parallel' ? [] : [invalid(path, policy, "must be 'OrderedReady' or 'Parallel'")]
}

function validateRollingUpdate(rollingUpdate: Obj, path: FieldPath): FieldError[] {
  const errs = nonNegative(rollingUpdate['partition'], path.child('partition'))
  const maxUnavailable = rollingUpdate['maxUnavailable']
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    appendAll(errs, validatePositiveIntOrPercent(maxUnavailable, path.child('maxUnavailable')))
    if (intOrPercentValue(maxUnavailable) === 0) errs.push(invalid(path.child('maxUnavailable'), new GoLiteral(goIntOrStringText(maxUnavailable)), 'cannot be 0'))
    appendAll(errs, notMoreThan100Percent(maxUnavailable, path.child('maxUnavailable')))
  }
  return errs
}

function rollingUpdateText(rollingUpdate: Obj): GoLiteral {
  const partition = typeof rollingUpdate['partition'] === 'number' ? rollingUpdate['partition'] : 0
  const max = rollingUpdate['maxUnavailable']
  const maxText = max === undefined || max === null ? '(*intstr.IntOrString)(nil)' : `&${goIntOrStringText(max)}`
  return new GoLiteral(`apps.RollingUpdateStatefulSetStrategy{Partition:${partition}, MaxUnavailable:${maxText}}`)
}

function validateUpdateStrategy(strategy: unknown, path: FieldPath): FieldError[] {
  const s = isPlainObject(strategy) ? strategy : {}
  const rollingUpdate = s['rollingUpdate']
  switch (s['type']) {
    case undefined:
    case '':
      return [required(path)]
    case 'OnDelete':
      return isPlainObject(rollingUpdate)
        ? [invalid(path.child('rollingUpdate'), rollingUpdateText(rollingUpdate), "only allowed for updateStrategy 'RollingUpdate'")]
        : []
    case 'RollingUpdate':
      return isPlainObject(rollingUpdate) ? validateRollingUpdate(rollingUpdate, path.child('rollingUpdate')) : []
    default:
      return [invalid(path, goStrategy('apps.StatefulSetUpdateStrategy', 'apps.RollingUpdateStatefulSetStrategy', s), "must be 'RollingUpdate' or 'OnDelete'")]
  }
}

function validateRetentionPolicy(policy: unknown, path: FieldPath): FieldError[] {
  if (!isPlainObject(policy)) return []
  const errs: FieldError[] = []
  for (const key of ['whenDeleted', 'whenScaled']) {
    const value = policy[key] ?? ''
    if (!RETENTION_POLICIES.includes(String(value))) errs.push(notSupported(path.child(key), value, RETENTION_POLICIES))
  }
  return errs
}

/** Upstream's StatefulSet template rules: the selector match and the template's own labels and annotations. */
// eslint-disable-next-line require-yield -- the selector rules take a template's rules in steps; these have none to take
function* validateTemplate(template: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  const meta = isPlainObject(template) && isPlainObject(template['metadata']) ? template['metadata'] : {}
  // Upstream reports these at template.labels and template.annotations, without `metadata`.
  return [...validateLabels(meta['labels'], path.child('labels')), ...validateAnnotations(meta['annotations'], path.child('annotations'))]
}

function* validateStatefulSetSpec(spec: Obj): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs = [
    ...validatePodManagementPolicy(spec['podManagementPolicy'], path.child('podManagementPolicy')),
    ...validateUpdateStrategy(spec['updateStrategy'], path.child('updateStrategy')),
    ...validateRetentionPolicy(spec['persistentVolumeClaimRetentionPolicy'], path.child('persistentVolumeClaimRetentionPolicy')),
    ...nonNegative(spec['replicas'], path.child('replicas')),
    ...nonNegative(spec['minReadySeconds'], path.child('minReadySeconds')),
  ]
  const ordinals = spec['ordinals']
  if (isPlainObject(ordinals)) appendAll(errs, nonNegative(ordinals['start'], path.child('ordinals.start')))
  yield* appendAllInSteps(errs, yield* validateControllerSelectorInSteps(spec, path, { kindWord: 'statefulset', unreadableDetail: '', templateRules: validateTemplate }))
  appendAll(errs, alwaysRestartRules(spec['template'], path.child('template'), 'StatefulSet'))
  return errs
}

export function validateStatefulSetInSteps(sts: KubeObject): Checkpointed<FieldError[]> {
  return validateStatefulSetSpec(specOf(sts))
}

function fixedPart(spec: Obj): Obj {
  const rest = { ...spec }
  for (const key of MUTABLE_FIELDS) delete rest[key]
  return rest
}

/** The spec's rules again, and no change outside the fields upstream lets an update touch. */
export function* validateStatefulSetUpdateInSteps(sts: KubeObject, old: KubeObject): Checkpointed<FieldError[]> {
  const errs = yield* validateStatefulSetSpec(specOf(sts))
  if (!semanticEqual(fixedPart(specOf(sts)), fixedPart(specOf(old)))) errs.push(forbiddenField(fieldPath('spec'), UPDATE_FORBIDDEN))
  return errs
}
