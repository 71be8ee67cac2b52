/**
 * What a write through a Job's `status` must satisfy (upstream's
 * ValidateJobUpdateStatus with the options its status strategy picks).
 *
 * Always: counters that are never negative, uncounted pods named once each,
 * and the SuccessCriteriaMet condition kept consistent with the others.
 * Upstream adds the stricter transition rules of the JobManagedBy feature
 * (beta, on by default at 1.32) so that a Job run by another controller
 * moves as the built-in controller moves it: a finished Job stays finished,
 * counters do not go back, times and terminal conditions agree. Most of those
 * apply only when the write changes one of the fields they concern, so a
 * status that a spec change made stale (fewer completions than indexes) can
 * still be written over by the controller.
 */
import { fieldPath, type FieldError, type FieldPath, invalid, invalidWithoutValue, duplicate, required } from '../../machinery/field.js'
import { goStringSliceText, GoLiteral, goTime } from '../../machinery/go-format.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { nonNegative } from '../apps/selector.js'
import { indexListError, overlappingIndex } from './job-indexes.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const STATUS = fieldPath('status')
const CONDITIONS = STATUS.child('conditions')

const objectAt = (v: unknown, key: string): Obj => {
  const inner = isPlainObject(v) ? v[key] : undefined
  return isPlainObject(inner) ? inner : {}
}
const count = (status: Obj, key: string): number => (typeof status[key] === 'number' ? (status[key] as number) : 0)
const optionalNumber = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined)
const optionalText = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

function conditionTrue(job: KubeObject, type: string): boolean {
  const conditions = objectAt(job, 'status')['conditions']
  return Array.isArray(conditions) && conditions.some((c) => isPlainObject(c) && c['type'] === type && c['status'] === 'True')
}

const isComplete = (job: KubeObject) => conditionTrue(job, 'Complete')
const isFailed = (job: KubeObject) => conditionTrue(job, 'Failed')
const isFinished = (job: KubeObject) => isComplete(job) || isFailed(job)
const isFailureTarget = (job: KubeObject) => conditionTrue(job, 'FailureTarget')
const isSuccessCriteriaMet = (job: KubeObject) => conditionTrue(job, 'SuccessCriteriaMet')

/** A timestamp as an instant, so that two spellings of one moment are the same time. */
function instant(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined
  const ms = Date.parse(v)
  return Number.isNaN(ms) ? undefined : ms
}

const sameTime = (a: unknown, b: unknown): boolean => instant(a) === instant(b) && (instant(a) !== undefined || a === b)

/** A timestamp as upstream prints a metav1.Time in a message (the server's zone is UTC). */
function timeValue(v: unknown): GoLiteral {
  const ms = instant(v)
  return goTime(ms === undefined ? v : new Date(ms).toISOString())
}

function uidList(v: unknown): string[] {
  return Array.isArray(v) ? v.map((uid) => (typeof uid === 'string' ? uid : '')) : []
}

/** Set and unset differ; within it, an absent list and an empty one are the same (upstream's semantic equality). */
function sameUncounted(a: unknown, b: unknown): boolean {
  if (!isPlainObject(a) || !isPlainObject(b)) return isPlainObject(a) === isPlainObject(b)
  return ['succeeded', 'failed'].every((key) => JSON.stringify(uidList(a[key])) === JSON.stringify(uidList(b[key])))
}

/** `%#v` of the uncounted pods, as upstream's message shows them. */
function uncountedValue(uncounted: Obj): GoLiteral {
  const list = (v: unknown) => goStringSliceText(Array.isArray(v) ? uidList(v) : undefined, 'types.UID')
  return new GoLiteral(`batch.UncountedTerminatedPods{Succeeded:${list(uncounted['succeeded'])}, Failed:${list(uncounted['failed'])}}`)
}

/** The JobManagedBy rules that apply to this write: each when the fields it concerns change (a few always). */
interface StatusChecks {
  decreasingSucceeded: boolean
  invalidCompletedIndexes: boolean
  invalidFailedIndexes: boolean
  failedIndexesOverlappingCompleted: boolean
  failedWithoutFailureTarget: boolean
  completeWithoutSuccessCriteriaMet: boolean
  finishedWithActivePods: boolean
  finishedWithoutStartTime: boolean
  finishedWithUncountedPods: boolean
  startTimeUpdateWhileRunning: boolean
  completionTimeBeforeStartTime: boolean
  notCompleteWithCompletionTime: boolean
  completeWithFailed: boolean
  completeWithFailureTarget: boolean
  moreReadyThanActive: boolean
  finishedWithTerminatingPods: boolean
}

function checksFor(job: KubeObject, old: KubeObject): StatusChecks {
  const spec = objectAt(job, 'spec')
  const status = objectAt(job, 'status')
  const before = objectAt(old, 'status')
  const indexed = spec['completionMode'] === 'Indexed'
  const changed = (is: (j: KubeObject) => boolean) => is(old) !== is(job)
  const finishedChanged = changed(isFinished)
  const completeChanged = changed(isComplete)
  const failedChanged = changed(isFailed)
  const completedIndexesChanged = (optionalText(before['completedIndexes']) ?? '') !== (optionalText(status['completedIndexes']) ?? '')
  const failedIndexesChanged = optionalText(before['failedIndexes']) !== optionalText(status['failedIndexes'])
  const activeChanged = count(before, 'active') !== count(status, 'active')
  const startTimeChanged = !sameTime(before['startTime'], status['startTime'])
  const completionTimeChanged = !sameTime(before['completionTime'], status['completionTime'])
  return {
    // An Indexed Job whose parallelism follows its completions may be scaled down, and so lose successes.
    decreasingSucceeded: !indexed || optionalNumber(spec['completions']) !== optionalNumber(spec['parallelism']),
    invalidCompletedIndexes: completedIndexesChanged,
    invalidFailedIndexes: failedIndexesChanged,
    failedIndexesOverlappingCompleted: failedIndexesChanged || completedIndexesChanged,
    failedWithoutFailureTarget: failedChanged || changed(isFailureTarget),
    completeWithoutSuccessCriteriaMet: completeChanged || changed(isSuccessCriteriaMet),
    finishedWithActivePods: finishedChanged || activeChanged,
    finishedWithoutStartTime: finishedChanged || startTimeChanged,
    finishedWithUncountedPods: finishedChanged || !sameUncounted(before['uncountedTerminatedPods'], status['uncountedTerminatedPods']),
    startTimeUpdateWhileRunning: startTimeChanged,
    completionTimeBeforeStartTime: startTimeChanged || completionTimeChanged,
    notCompleteWithCompletionTime: completeChanged || completionTimeChanged,
    completeWithFailed: completeChanged || failedChanged,
    completeWithFailureTarget: completeChanged || changed(isFailureTarget),
    moreReadyThanActive: optionalNumber(before['ready']) !== optionalNumber(status['ready']) || activeChanged,
    finishedWithTerminatingPods: finishedChanged || optionalNumber(before['terminating']) !== optionalNumber(status['terminating']),
  }
}

/** Each uncounted pod's uid must be given, and name one pod once across both lists. */
function validateUncounted(uncounted: unknown, path: FieldPath): FieldError[] {
  if (!isPlainObject(uncounted)) return []
  const errs: FieldError[] = []
  const seen = new Set<string>()
  for (const key of ['succeeded', 'failed']) {
    uidList(uncounted[key]).forEach((uid, i) => {
      const at = path.child(key).index(i)
      if (uid === '') errs.push(invalid(at, uid, 'must not be empty'))
      else if (seen.has(uid)) errs.push(duplicate(at, uid))
      else seen.add(uid)
    })
  }
  return errs
}

/** The rules on the conditions and times of the written status alone. */
function validateConditionsAndTimes(job: KubeObject, status: Obj, checks: StatusChecks): FieldError[] {
  const errs: FieldError[] = []
  const complete = isComplete(job)
  if (checks.completeWithFailed && complete && isFailed(job)) errs.push(invalidWithoutValue(CONDITIONS, 'cannot set Complete=True and Failed=true conditions'))
  if (checks.completeWithFailureTarget && complete && isFailureTarget(job))
    errs.push(invalidWithoutValue(CONDITIONS, 'cannot set Complete=True and FailureTarget=true conditions'))
  const completionTime = status['completionTime']
  const hasCompletionTime = completionTime !== undefined && completionTime !== null
  if (checks.notCompleteWithCompletionTime && hasCompletionTime && !complete)
    errs.push(invalid(STATUS.child('completionTime'), timeValue(completionTime), 'cannot set completionTime when there is no Complete=True condition'))
  if (checks.notCompleteWithCompletionTime && !hasCompletionTime && complete) errs.push(required(STATUS.child('completionTime'), 'completionTime is required for Complete jobs'))
  const start = instant(status['startTime'])
  const end = instant(completionTime)
  if (checks.completionTimeBeforeStartTime && start !== undefined && end !== undefined && end < start)
    errs.push(invalid(STATUS.child('completionTime'), timeValue(completionTime), 'completionTime cannot be set before startTime'))
  if (checks.failedWithoutFailureTarget && isFailed(job) && !isFailureTarget(job))
    errs.push(invalidWithoutValue(CONDITIONS, 'cannot set Failed=True condition without the FailureTarget=true condition'))
  if (checks.completeWithoutSuccessCriteriaMet && complete && !isSuccessCriteriaMet(job))
    errs.push(invalidWithoutValue(CONDITIONS, 'cannot set Complete=True condition without the SuccessCriteriaMet=true condition'))
  return errs
}

/** A finished Job runs nothing and has counted every pod. */
function validateFinished(job: KubeObject, status: Obj, checks: StatusChecks): FieldError[] {
  if (!isFinished(job)) return []
  const errs: FieldError[] = []
  if (checks.finishedWithActivePods && count(status, 'active') > 0) errs.push(invalid(STATUS.child('active'), count(status, 'active'), 'active>0 is invalid for finished job'))
  if (checks.finishedWithoutStartTime && (status['startTime'] === undefined || status['startTime'] === null))
    errs.push(required(STATUS.child('startTime'), 'startTime is required for finished job'))
  const uncounted = status['uncountedTerminatedPods']
  if (checks.finishedWithUncountedPods && isPlainObject(uncounted) && uidList(uncounted['succeeded']).length + uidList(uncounted['failed']).length > 0)
    errs.push(invalid(STATUS.child('uncountedTerminatedPods'), uncountedValue(uncounted), 'uncountedTerminatedPods needs to be empty for finished job'))
  return errs
}

/** completedIndexes and failedIndexes: well formed, for an Indexed Job with a limit per index, and apart. */
function validateIndexes(spec: Obj, status: Obj, checks: StatusChecks): FieldError[] {
  const errs: FieldError[] = []
  const completions = optionalNumber(spec['completions'])
  const completed = optionalText(status['completedIndexes']) ?? ''
  const failed = optionalText(status['failedIndexes'])
  const perIndexLimit = spec['backoffLimitPerIndex'] !== undefined && spec['backoffLimitPerIndex'] !== null
  if (checks.invalidCompletedIndexes && completions !== undefined) {
    const problem = indexListError(completed, completions)
    if (problem) errs.push(invalid(STATUS.child('completedIndexes'), completed, `error parsing completedIndexes: ${problem}`))
  }
  if (checks.invalidFailedIndexes && completions !== undefined && perIndexLimit && failed !== undefined) {
    const problem = indexListError(failed, completions)
    if (problem) errs.push(invalid(STATUS.child('failedIndexes'), failed, `error parsing failedIndexes: ${problem}`))
  }
  if (checks.invalidCompletedIndexes && completed !== '' && spec['completionMode'] !== 'Indexed')
    errs.push(invalid(STATUS.child('completedIndexes'), completed, 'cannot set non-empty completedIndexes when non-indexed completion mode'))
  if (checks.invalidFailedIndexes && !perIndexLimit && failed !== undefined)
    errs.push(invalid(STATUS.child('failedIndexes'), failed, 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'))
  if (checks.failedIndexesOverlappingCompleted && completions !== undefined && failed !== undefined) {
    const index = overlappingIndex(completed, failed, completions)
    if (index !== undefined) errs.push(invalid(STATUS.child('failedIndexes'), failed, `failedIndexes and completedIndexes overlap at index: ${index}`))
  }
  return errs
}

/** upstream's validateJobStatus, with the checks chosen for this write. */
function validateJobStatus(job: KubeObject, checks: StatusChecks): FieldError[] {
  const spec = objectAt(job, 'spec')
  const status = objectAt(job, 'status')
  const errs: FieldError[] = []
  for (const key of ['active', 'succeeded', 'failed', 'ready', 'terminating']) appendAll(errs, nonNegative(status[key], STATUS.child(key)))
  appendAll(errs, validateUncounted(status['uncountedTerminatedPods'], STATUS.child('uncountedTerminatedPods')))
  appendAll(errs, validateConditionsAndTimes(job, status, checks))
  appendAll(errs, validateFinished(job, status, checks))
  appendAll(errs, validateIndexes(spec, status, checks))
  const terminating = optionalNumber(status['terminating'])
  if (checks.finishedWithTerminatingPods && terminating !== undefined && terminating > 0 && isFinished(job))
    errs.push(invalid(STATUS.child('terminating'), terminating, 'terminating>0 is invalid for finished job'))
  const ready = optionalNumber(status['ready'])
  if (checks.moreReadyThanActive && ready !== undefined && ready > count(status, 'active'))
    errs.push(invalid(STATUS.child('ready'), ready, 'cannot set more ready pods than active'))
  // With JobManagedBy on, SuccessCriteriaMet may also mark a NonIndexed Job or one without a success policy.
  const successCriteriaMet = isSuccessCriteriaMet(job)
  if (successCriteriaMet && isFailed(job)) errs.push(invalidWithoutValue(CONDITIONS, 'cannot set SuccessCriteriaMet=True and Failed=true conditions'))
  if (successCriteriaMet && isFailureTarget(job)) errs.push(invalidWithoutValue(CONDITIONS, 'cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'))
  if (isPlainObject(spec['successPolicy']) && !successCriteriaMet && isComplete(job))
    errs.push(invalidWithoutValue(CONDITIONS, 'cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'))
  return errs
}

/** The rules comparing the written status with the stored one. */
function validateTransitions(job: KubeObject, old: KubeObject, checks: StatusChecks): FieldError[] {
  const errs: FieldError[] = []
  const status = objectAt(job, 'status')
  const before = objectAt(old, 'status')
  for (const type of ['Failed', 'Complete', 'FailureTarget'])
    if (conditionTrue(old, type) && !conditionTrue(job, type)) errs.push(invalidWithoutValue(CONDITIONS, `cannot disable the terminal ${type}=True condition`))
  if (count(status, 'failed') < count(before, 'failed')) errs.push(invalid(STATUS.child('failed'), count(status, 'failed'), 'cannot decrease the failed counter'))
  if (checks.decreasingSucceeded && count(status, 'succeeded') < count(before, 'succeeded'))
    errs.push(invalid(STATUS.child('succeeded'), count(status, 'succeeded'), 'cannot decrease the succeeded counter'))
  const completionTime = status['completionTime']
  const previousCompletionTime = before['completionTime']
  if (completionTime !== undefined && completionTime !== null && previousCompletionTime !== undefined && previousCompletionTime !== null && !sameTime(completionTime, previousCompletionTime))
    errs.push(invalid(STATUS.child('completionTime'), timeValue(completionTime), 'completionTime cannot be mutated'))
  const suspended = objectAt(job, 'spec')['suspend'] === true
  if (checks.startTimeUpdateWhileRunning && before['startTime'] !== undefined && before['startTime'] !== null && !suspended)
    errs.push(required(STATUS.child('startTime'), 'startTime cannot be removed for unsuspended job'))
  if (isSuccessCriteriaMet(old) && !isSuccessCriteriaMet(job)) errs.push(invalidWithoutValue(CONDITIONS, 'cannot disable the SuccessCriteriaMet=True condition'))
  if (isComplete(old) && !isSuccessCriteriaMet(old) && isSuccessCriteriaMet(job))
    errs.push(invalidWithoutValue(CONDITIONS, 'cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'))
  return errs
}

/** A write through jobs/status: the status rules, then how it may move from the stored one. */
export function validateJobStatusUpdate(job: KubeObject, old: KubeObject): FieldError[] {
  const checks = checksFor(job, old)
  return [...validateJobStatus(job, checks), ...validateTransitions(job, old, checks)]
}
