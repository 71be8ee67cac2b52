/**
 * CronJobs: upstream's batch/v1 defaults and validateCronJobSpec: the
 * schedule, the time zone, the concurrency policy and a job template whose
 * selector the server will generate.
 */
import { fieldPath, type FieldError, type FieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { goLabelSelector } from '../../machinery/go-format.js'
import { nonNegative } from '../apps/selector.js'
import { defaultTemplateInSteps, objectAt, setIfAbsent, specOf } from '../apps/template.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import type { PodSpecValidationOptions } from '../core/pod-spec-validation.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { cronScheduleError } from './cron-schedule.js'
import { defaultPodFailurePolicy } from './job.js'
import { validateJobSpecFieldsInSteps } from './job-spec.js'
import { loadLocationError } from './time-zone.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace']
/** The controller names a run `<name>-<11 characters>`, and a Job's name must stay a 63-character label. */
const MAX_NAME_LENGTH = 52
/** An IANA name component: letters, `.`, `-`, `_`, plus the digits and `+` of legacy names. */
const ZONE_PART_RE = /^[A-Za-z.\-_0-9+]{1,14}$/

export function* applyCronJobDefaultsInSteps(cj: KubeObject): Checkpointed<void> {
  const spec = specOf(cj)
  if (!spec['concurrencyPolicy']) spec['concurrencyPolicy'] = 'Allow'
  setIfAbsent(spec, 'suspend', false)
  setIfAbsent(spec, 'successfulJobsHistoryLimit', 3)
  setIfAbsent(spec, 'failedJobsHistoryLimit', 1)
  // The job template gets its pod template's defaults, not a Job's own: the controller's Job will.
  const jobSpec = objectAt(objectAt(spec, 'jobTemplate'), 'spec')
  defaultPodFailurePolicy(jobSpec)
  yield* defaultTemplateInSteps(jobSpec)
}

function validateSchedule(schedule: string, allowTZ: boolean, timeZone: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const problem = cronScheduleError(schedule)
  if (problem) errs.push(invalid(path, schedule, problem))
  // Upstream looks for `TZ` anywhere in the text, CRON_TZ= included.
  if (schedule.includes('TZ')) {
    if (!allowTZ) errs.push(invalid(path, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'))
    else if (timeZone !== undefined && timeZone !== null) errs.push(invalid(path, schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'))
  }
  return errs
}

function validateTimeZone(timeZone: unknown, path: FieldPath): FieldError[] {
  if (typeof timeZone !== 'string') return []
  if (timeZone === '') return [invalid(path, timeZone, 'timeZone must be nil or non-empty string')]
  const badPart = timeZone.split('/').some((p) => p === '.' || p === '..' || p.startsWith('-') || !ZONE_PART_RE.test(p))
  if (badPart) return [invalid(path, timeZone, `unknown time zone ${timeZone}`)]
  const errs: FieldError[] = []
  if (timeZone.toLowerCase() === 'local')
    errs.push(invalid(path, timeZone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'))
  const problem = loadLocationError(timeZone)
  if (problem) errs.push(invalid(path, timeZone, problem))
  return errs
}

function validateConcurrencyPolicy(policy: unknown, path: FieldPath): FieldError[] {
  if (!policy) return [required(path)]
  return CONCURRENCY_POLICIES.includes(String(policy)) ? [] : [notSupported(path, policy, CONCURRENCY_POLICIES)]
}

/** upstream's ValidateJobTemplateSpec: a Job spec whose selector is left to the server. */
function* validateJobTemplate(template: unknown, path: FieldPath, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const jobSpec = isPlainObject(template) && isPlainObject(template['spec']) ? template['spec'] : {}
  const specPath = path.child('spec')
  const errs = yield* validateJobSpecFieldsInSteps(jobSpec, specPath, opts)
  if (isPlainObject(jobSpec['selector'])) errs.push(invalid(specPath.child('selector'), goLabelSelector(jobSpec['selector']), '`selector` will be auto-generated'))
  if (jobSpec['manualSelector'] === true) errs.push(notSupported(specPath.child('manualSelector'), true, ['nil', 'false']))
  return errs
}

function* validateCronJobSpec(spec: Obj, oldSpec: Obj | undefined, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs: FieldError[] = []
  const schedule = typeof spec['schedule'] === 'string' ? spec['schedule'] : ''
  if (!schedule) errs.push(required(path.child('schedule')))
  else {
    // A CronJob stored with TZ in its schedule (before the timeZone field) may keep it.
    const allowTZ = typeof oldSpec?.['schedule'] === 'string' && oldSpec['schedule'].includes('TZ')
    appendAll(errs, validateSchedule(schedule, allowTZ, spec['timeZone'], path.child('schedule')))
  }
  appendAll(errs, nonNegative(spec['startingDeadlineSeconds'], path.child('startingDeadlineSeconds')))
  if (!oldSpec || oldSpec['timeZone'] !== spec['timeZone']) appendAll(errs, validateTimeZone(spec['timeZone'], path.child('timeZone')))
  appendAll(errs, validateConcurrencyPolicy(spec['concurrencyPolicy'], path.child('concurrencyPolicy')))
  yield* appendAllInSteps(errs, yield* validateJobTemplate(spec['jobTemplate'], path.child('jobTemplate'), opts))
  appendAll(errs, nonNegative(spec['successfulJobsHistoryLimit'], path.child('successfulJobsHistoryLimit')))
  appendAll(errs, nonNegative(spec['failedJobsHistoryLimit'], path.child('failedJobsHistoryLimit')))
  return errs
}

export function* validateCronJobInSteps(cj: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const errs = yield* validateCronJobSpec(specOf(cj), undefined, opts)
  const name = cj.metadata.name ?? ''
  if (name.length > MAX_NAME_LENGTH) errs.push(invalid(fieldPath('metadata').child('name'), name, `must be no more than ${MAX_NAME_LENGTH} characters`))
  return errs
}

/** Update: the spec's rules again; the name's length is not checked, so that older long-named CronJobs stay editable. */
export function validateCronJobUpdateInSteps(cj: KubeObject, old: KubeObject, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  return validateCronJobSpec(specOf(cj), specOf(old), opts)
}
