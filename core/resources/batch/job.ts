/**
 * Jobs: upstream's batch/v1 defaults, the selector and pod labels the server
 * generates from the job's uid (unless spec.manualSelector is true),
 * ValidateJob, and what an update may change.
 */
import { fieldPath, type FieldError, type FieldPath, invalid, required } from '../../machinery/field.js'
import { isDNS1123Label } from '../../machinery/names.js'
import { goLabelSelector, goStringMap } from '../../machinery/go-format.js'
import { validateLabelSelector } from '../../validation/label-selector.js'
import { immutableField, immutableSelector, parseSelector, selectorMatchesTemplate, templateLabels } from '../apps/selector.js'
import { defaultTemplateInSteps, objectAt, setIfAbsent, specOf } from '../apps/template.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { objects } from '../core/pod-spec-defaults.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { validateJobSpecFieldsInSteps } from './job-spec.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid'
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name'
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid'
export const LEGACY_JOB_NAME_LABEL = 'job-name'

const MAX_INT32 = 2147483647

/** A pod failure policy's condition pattern matches `True` unless told otherwise. */
export function defaultPodFailurePolicy(spec: Obj): void {
  const policy = spec['podFailurePolicy']
  if (!isPlainObject(policy)) return
  for (const rule of objects(policy['rules'])) for (const pattern of objects(rule['onPodConditions'])) if (!pattern['status']) pattern['status'] = 'True'
}

export function* applyJobDefaultsInSteps(job: KubeObject): Checkpointed<void> {
  const spec = specOf(job)
  // A job that says nothing about either runs one pod to one completion.
  if (!isSet(spec['completions']) && !isSet(spec['parallelism'])) {
    spec['completions'] = 1
    spec['parallelism'] = 1
  }
  setIfAbsent(spec, 'parallelism', 1)
  // With a limit per index, the job-wide limit steps aside.
  setIfAbsent(spec, 'backoffLimit', isSet(spec['backoffLimitPerIndex']) ? MAX_INT32 : 6)
  const labels = templateLabels(spec['template'])
  if (labels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...labels }
  setIfAbsent(spec, 'completionMode', 'NonIndexed')
  setIfAbsent(spec, 'suspend', false)
  defaultPodFailurePolicy(spec)
  setIfAbsent(spec, 'podReplacementPolicy', isSet(spec['podFailurePolicy']) ? 'Failed' : 'TerminatingOrFailed')
  setIfAbsent(spec, 'manualSelector', false)
  yield* defaultTemplateInSteps(spec)
}

/**
 * A created Job as upstream reads it back: its defaulter copies the
 * template's labels to a Job that has none whenever the stored Job is
 * decoded, and by then the template carries the selector labels
 * generateSelector gave it (`kubectl create job` makes such Jobs).
 */
export function jobAsReadBack(job: KubeObject): KubeObject | undefined {
  if (Object.keys(job.metadata.labels ?? {}).length > 0) return undefined
  const spec = job['spec']
  const labels = isPlainObject(spec) ? templateLabels(spec['template']) : undefined
  if (!labels) return undefined
  return { ...job, metadata: { ...job.metadata, labels: { ...labels } } }
}

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null
}

/**
 * Labels the job's pods with its uid and name and selects them by the uid,
 * so no other controller's pods overlap. Labels the client set are kept;
 * validation refuses them when they disagree.
 */
export function generateSelector(job: KubeObject): void {
  const spec = specOf(job)
  if (spec['manualSelector'] === true) return
  const uid = job.metadata.uid ?? ''
  const name = job.metadata.name ?? ''
  const meta = objectAt(objectAt(spec, 'template'), 'metadata')
  const labels = objectAt(meta, 'labels')
  for (const key of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) setIfAbsent(labels, key, name)
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) setIfAbsent(labels, key, uid)
  const matchLabels = objectAt(objectAt(spec, 'selector'), 'matchLabels')
  setIfAbsent(matchLabels, CONTROLLER_UID_LABEL, uid)
}

function hasLabel(labels: Record<string, string> | undefined, path: FieldPath, key: string, expected: string): FieldError[] {
  const at = path.child('labels').key(key)
  const actual = labels?.[key]
  if (actual === undefined) return [required(at, expected)]
  return actual === expected ? [] : [invalid(at, goStringMap(labels), `must be '${expected}'`)]
}

/** upstream's validateGeneratedSelector: a generated selector and the pod labels must name this job. */
function validateGeneratedSelector(job: KubeObject, requirePrefixedLabels: boolean): FieldError[] {
  const spec = specOf(job)
  if (spec['manualSelector'] === true || !isPlainObject(spec['selector'])) return []
  const uid = job.metadata.uid ?? ''
  const name = job.metadata.name ?? ''
  const errs: FieldError[] = []
  if (!uid) errs.push(required(fieldPath('metadata').child('uid')))
  const path = fieldPath('spec').child('template').child('metadata')
  const labels = templateLabels(spec['template'])
  const expected: Record<string, string> = {}
  errs.push(...hasLabel(labels, path, LEGACY_CONTROLLER_UID_LABEL, uid), ...hasLabel(labels, path, LEGACY_JOB_NAME_LABEL, name))
  if (requirePrefixedLabels) {
    errs.push(...hasLabel(labels, path, CONTROLLER_UID_LABEL, uid), ...hasLabel(labels, path, JOB_NAME_LABEL, name))
    expected[CONTROLLER_UID_LABEL] = uid
    expected[JOB_NAME_LABEL] = name
  }
  expected[LEGACY_CONTROLLER_UID_LABEL] = uid
  expected[LEGACY_JOB_NAME_LABEL] = name
  const selector = parseSelector(spec['selector'])
  if (selector && !selector.matches(expected)) errs.push(invalid(fieldPath('spec').child('selector'), goLabelSelector(spec['selector']), '`selector` not auto-generated'))
  return errs
}

/** upstream's ValidateJobSpec: the spec's fields, then a selector that picks the template's pods. */
function* validateJobSpec(spec: Obj, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs = yield* validateJobSpecFieldsInSteps(spec, path, opts)
  if (!isPlainObject(spec['selector'])) errs.push(required(path.child('selector')))
  else appendAll(errs, validateLabelSelector(spec['selector'], path.child('selector')))
  const selector = parseSelector(spec['selector'])
  if (selector) appendAll(errs, selectorMatchesTemplate(selector, spec['template'], path.child('template')))
  return errs
}

/** An Indexed job's last pod is `<name>-<completions-1>`, which must still be a DNS label. */
function validateIndexedHostname(job: KubeObject): FieldError[] {
  const spec = specOf(job)
  const completions = spec['completions']
  if (spec['completionMode'] !== 'Indexed' || typeof completions !== 'number' || completions <= 0) return []
  const name = job.metadata.name ?? ''
  const hostname = `${name}-${completions - 1}`
  if (isDNS1123Label(hostname).length === 0) return []
  return [invalid(fieldPath('metadata').child('name'), name, `will not able to create pod with invalid DNS label: ${hostname}`)]
}

function* validateJobWith(job: KubeObject, requirePrefixedLabels: boolean, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = validateGeneratedSelector(job, requirePrefixedLabels)
  yield* appendAllInSteps(errs, yield* validateJobSpec(specOf(job), opts))
  appendAll(errs, validateIndexedHostname(job))
  return errs
}

export function validateJobInSteps(job: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  return validateJobWith(job, true, opts)
}

/**
 * A suspended job that never started may still move its pods elsewhere:
 * node affinity, node selector, tolerations, scheduling gates, and the
 * template's labels and annotations are then exempt from immutability.
 */
function schedulingExempt(template: Obj, old: Obj): Obj {
  const out = structuredClone(old)
  const spec = objectAt(out, 'spec')
  const next = isPlainObject(template['spec']) ? template['spec'] : {}
  const affinity = next['affinity']
  const oldAffinity = spec['affinity']
  if (isPlainObject(affinity)) {
    spec['affinity'] = { ...(isPlainObject(oldAffinity) ? oldAffinity : {}), nodeAffinity: affinity['nodeAffinity'] }
  } else if (isPlainObject(oldAffinity)) {
    const { nodeAffinity: _drop, ...rest } = oldAffinity
    if (Object.keys(rest).length) spec['affinity'] = rest
    else delete spec['affinity']
  }
  for (const key of ['nodeSelector', 'tolerations', 'schedulingGates']) spec[key] = next[key]
  const meta = objectAt(out, 'metadata')
  const nextMeta = isPlainObject(template['metadata']) ? template['metadata'] : {}
  meta['labels'] = nextMeta['labels']
  meta['annotations'] = nextMeta['annotations']
  return out
}

/** Completions are fixed, except an Indexed job's, which may change together with parallelism. */
function validateCompletionsUpdate(spec: Obj, old: Obj, path: FieldPath): FieldError[] {
  const at = path.child('completions')
  if (spec['completionMode'] !== 'Indexed') return immutableField(spec['completions'], old['completions'], at)
  const completions = spec['completions']
  if (completions === old['completions'] || typeof completions !== 'number') return []
  return completions === spec['parallelism'] ? [] : [invalid(at, completions, 'can only be modified in tandem with spec.parallelism')]
}

export function* validateJobUpdateInSteps(job: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const spec = specOf(job)
  const oldSpec = specOf(old)
  const oldLabels = templateLabels(oldSpec['template']) ?? {}
  // Jobs created before the prefixed labels existed are not asked for them.
  const requirePrefixed = CONTROLLER_UID_LABEL in oldLabels && JOB_NAME_LABEL in oldLabels
  const path = fieldPath('spec')
  const errs = yield* validateJobWith(job, requirePrefixed, opts)
  appendAll(errs, validateCompletionsUpdate(spec, oldSpec, path))
  appendAll(errs, immutableSelector(spec, oldSpec, path))
  const status = isPlainObject(old['status']) ? old['status'] : {}
  const template = isPlainObject(spec['template']) ? spec['template'] : {}
  const oldTemplate = isPlainObject(oldSpec['template']) ? oldSpec['template'] : {}
  const mayReschedule = oldSpec['suspend'] === true && !isSet(status['startTime'])
  appendAll(errs, immutableField(template, mayReschedule ? schedulingExempt(template, oldTemplate) : oldTemplate, path.child('template')))
  for (const key of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy'])
    appendAll(errs, immutableField(spec[key], oldSpec[key], path.child(key)))
  return errs
}
