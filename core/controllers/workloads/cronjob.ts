/**
 * The CronJob controller (upstream's pkg/controller/cronjob, the v2
 * controller): at each time the schedule comes due it creates a Job named
 * `<cronjob>-<minutes since the epoch>`, under concurrencyPolicy Allow,
 * Forbid or Replace and within startingDeadlineSeconds; it keeps
 * status.active, lastScheduleTime and lastSuccessfulTime and deletes the
 * finished Jobs beyond the history limits. Times come from the
 * controller's clock; the next run is a queue timer, and a clock moved by
 * hand is noticed (clock-jumps.ts).
 */
import type { SharedInformer } from '../../client/informer.js'
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { loadLocationError } from '../../resources/batch/time-zone.js'
import { cronJobs as cronJobEntry, jobs as jobEntry } from '../../resources/groups/batch.js'
import { onClockJump } from './clock-jumps.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { type CronSchedule, parseCronSchedule } from './cron-next.js'
import { finishedAs, jobFromTemplate, jobNameFor, jobsBeyondHistory } from './cronjob-jobs.js'
import { controllerOf, isConflict, isNotFound, keyOf, splitKey } from './object-keys.js'
import { StatusError } from '../../machinery/status-error.js'
import { WorkQueue } from './work-queue.js'

const BY_CRONJOB = 'cronjob-controller:cronjob'
/** Beyond this many missed runs upstream warns (TooManyMissedTimes). */
const MISSED_RUNS_WARNING = 100
/** Upstream's margin past the next run, so the check finds it due. */
const NEXT_RUN_MARGIN_MS = 100

type Obj = Record<string, unknown>
interface JobRef {
  kind: string
  namespace: string
  name: string
  uid: string
  apiVersion: string
  resourceVersion?: string
}

export const cronJobController: WorkloadController = {
  name: 'cronjob',
  serviceAccount: 'cronjob-controller',
  onByDefault: true,
  async start(ctx) {
    const cronJobs = ctx.informers.informer({ group: 'batch', version: 'v1', resource: 'cronjobs' })
    const jobs = ctx.informers.informer({ group: 'batch', version: 'v1', resource: 'jobs' })
    jobs.addIndex(BY_CRONJOB, (job) => {
      const owner = controllerOf(job)
      return owner?.kind === 'CronJob' ? [`${job.metadata.namespace}/${owner.name}`] : []
    })
    const queue: WorkQueue = new WorkQueue(async (key) => {
      try {
        await syncCronJob(ctx, cronJobs, jobs, queue, key)
      } catch (err) {
        if (!isConflict(err)) throw err
        queue.add(key)
      }
    }, { logger: ctx.logger, name: 'cronjob' })
    await Promise.all([cronJobs.synced, jobs.synced])
    const enqueueOwner = (job: KubeObject): void => {
      const owner = controllerOf(job)
      if (owner?.kind === 'CronJob') queue.add(`${job.metadata.namespace}/${owner.name}`)
    }
    const stopCronJobs = cronJobs.addHandlers({ onAdd: (cj) => queue.add(keyOf(cj)), onUpdate: (_, cj) => queue.add(keyOf(cj)) })
    const stopJobs = jobs.addHandlers({ onAdd: enqueueOwner, onUpdate: (_, job) => enqueueOwner(job), onDelete: enqueueOwner })
    const stopJumps = onClockJump(ctx.now, () => cronJobs.list().forEach((cj) => queue.add(keyOf(cj))))
    return () => {
      stopCronJobs()
      stopJobs()
      stopJumps()
      queue.stop()
    }
  },
}

async function syncCronJob(ctx: ControllerContext, cronJobs: SharedInformer, jobInformer: SharedInformer, queue: WorkQueue, key: string): Promise<void> {
  const { namespace, name } = splitKey(key)
  let cronJob = cronJobs.get(namespace, name)
  if (!cronJob) return
  const owned = jobInformer.byIndex(BY_CRONJOB, key).filter((j) => controllerOf(j)?.uid === cronJob!.metadata.uid)
  const status = structuredClone((cronJob['status'] as Obj | undefined) ?? {})
  let active = ((status['active'] as JobRef[] | undefined) ?? []).slice()

  for (const job of owned) {
    const listed = active.some((ref) => ref.uid === job.metadata.uid)
    const finished = finishedAs(job)
    if (!listed && !finished) {
      // Our own status write may not have reached the cache yet: ask the server before calling the Job unexpected.
      const fresh = await ctx.client.get(cronJobEntry, namespace, name)
      if (!((fresh['status'] as Obj | undefined)?.['active'] as JobRef[] | undefined)?.some((ref) => ref.uid === job.metadata.uid))
        ctx.events.record(cronJob, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${job.metadata.name}`)
    } else if (listed && finished) {
      active = active.filter((ref) => ref.uid !== job.metadata.uid)
      ctx.events.record(cronJob, 'Normal', 'SawCompletedJob', `Saw completed job: ${job.metadata.name}, condition: ${finished}`)
    }
    const completed = (job['status'] as Obj | undefined)?.['completionTime']
    if (finished === 'Complete' && typeof completed === 'string' && (!status['lastSuccessfulTime'] || Date.parse(completed) > Date.parse(status['lastSuccessfulTime'] as string)))
      status['lastSuccessfulTime'] = completed
  }
  for (const ref of active.filter((r) => !owned.some((j) => j.metadata.uid === r.uid))) {
    if (await jobExists(ctx, ref)) continue
    active = active.filter((r) => r !== ref)
    ctx.events.record(cronJob, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`)
  }

  const outcome = cronJob.metadata.deletionTimestamp ? undefined : await runDue(ctx, cronJob, status, active)
  active = outcome?.active ?? active
  for (const job of jobsBeyondHistory(cronJob, owned)) {
    if (await deleteJob(ctx, cronJob, job.metadata.name ?? '')) active = active.filter((ref) => ref.uid !== job.metadata.uid)
  }
  if (active.length) status['active'] = active
  else delete status['active']
  if (JSON.stringify(status) !== JSON.stringify(cronJob['status'] ?? {})) cronJob = await ctx.client.updateStatus(cronJobEntry, namespace, { ...cronJob, status })
  if (outcome?.schedule) {
    const now = ctx.now()
    const next = outcome.schedule.next(now)
    if (next) queue.addAfter(key, next.getTime() - now.getTime() + NEXT_RUN_MARGIN_MS)
  }
}

/** Starts the Job of the most recent unmet scheduled time, if any may start; answers the schedule to wait on. */
async function runDue(ctx: ControllerContext, cronJob: KubeObject, status: Obj, active: JobRef[]): Promise<{ schedule?: CronSchedule; active: JobRef[] }> {
  const spec = cronJob['spec'] as Obj
  const timeZone = spec['timeZone'] as string | undefined
  if (timeZone !== undefined) {
    const problem = loadLocationError(timeZone)
    if (problem) {
      ctx.events.record(cronJob, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(timeZone)}: ${problem}`)
      return { active }
    }
  }
  if (spec['suspend'] === true) return { active }
  let schedule: CronSchedule
  try {
    schedule = parseCronSchedule(String(spec['schedule'] ?? ''), timeZone)
  } catch (err) {
    ctx.events.record(cronJob, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(spec['schedule'])} : ${(err as Error).message}`)
    return { active }
  }
  const now = ctx.now()
  const deadline = typeof spec['startingDeadlineSeconds'] === 'number' ? spec['startingDeadlineSeconds'] * 1000 : undefined
  const scheduled = mostRecentRun(ctx, cronJob, schedule, now, deadline)
  if (!scheduled) return { schedule, active }
  if (deadline !== undefined && scheduled.getTime() + deadline < now.getTime()) {
    ctx.events.record(cronJob, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`)
    return { schedule, active }
  }
  const jobName = jobNameFor(cronJob, scheduled)
  if (active.some((ref) => ref.name === jobName) || status['lastScheduleTime'] === formatTimestamp(scheduled)) return { schedule, active }
  const policy = spec['concurrencyPolicy'] ?? 'Allow'
  if (policy === 'Forbid' && active.length) {
    ctx.events.record(cronJob, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid')
    return { schedule, active }
  }
  if (policy === 'Replace') {
    for (const ref of active) if (await deleteJob(ctx, cronJob, ref.name)) active = active.filter((r) => r !== ref)
  }
  const job = await createJob(ctx, cronJob, scheduled, schedule.timeZone)
  if (!job) return { schedule, active }
  const ref: JobRef = { kind: 'Job', namespace: job.metadata.namespace ?? '', name: job.metadata.name ?? '', uid: job.metadata.uid ?? '', apiVersion: 'batch/v1', resourceVersion: job.metadata.resourceVersion ?? '' }
  status['lastScheduleTime'] = formatTimestamp(scheduled)
  return { schedule, active: [...active.filter((r) => r.uid !== ref.uid), ref] }
}

/**
 * The latest scheduled time not after `now` and after the last run (or the
 * CronJob's creation, or `now` less the starting deadline, whichever is later).
 */
function mostRecentRun(ctx: ControllerContext, cronJob: KubeObject, schedule: CronSchedule, now: Date, deadlineMs: number | undefined): Date | undefined {
  const last = (cronJob['status'] as Obj | undefined)?.['lastScheduleTime']
  let earliest = Date.parse(typeof last === 'string' ? last : (cronJob.metadata.creationTimestamp ?? now.toISOString()))
  if (deadlineMs !== undefined) earliest = Math.max(earliest, now.getTime() - deadlineMs)
  let found: Date | undefined
  let missed = 0
  for (let t = schedule.next(new Date(earliest)); t && t <= now; t = schedule.next(t)) {
    found = t
    if (++missed > MISSED_RUNS_WARNING) {
      ctx.events.record(cronJob, 'Warning', 'TooManyMissedTimes', `too many missed start times: ${MISSED_RUNS_WARNING + 1}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`)
      return latestBefore(schedule, now, found)
    }
  }
  return found
}

/** The latest run not after `now`, searched in windows growing back from it (a long outage need not be walked run by run). */
function latestBefore(schedule: CronSchedule, now: Date, atLeast: Date): Date {
  for (const window of [3_600_000, 86_400_000, 32 * 86_400_000, 367 * 86_400_000]) {
    let found: Date | undefined
    for (let t = schedule.next(new Date(Math.max(atLeast.getTime(), now.getTime() - window))); t && t <= now; t = schedule.next(t)) found = t
    if (found) return found
  }
  return atLeast
}

async function createJob(ctx: ControllerContext, cronJob: KubeObject, scheduled: Date, timeZone: string): Promise<KubeObject | undefined> {
  const namespace = cronJob.metadata.namespace ?? ''
  try {
    const job = await ctx.client.create(jobEntry, namespace, jobFromTemplate(cronJob, scheduled, timeZone))
    ctx.events.record(cronJob, 'Normal', 'SuccessfulCreate', `Created job ${job.metadata.name}`)
    return job
  } catch (err) {
    if (err instanceof StatusError && err.code === 409 && err.reason === 'AlreadyExists') {
      // Made by an earlier pass whose status write the cache has not shown yet: ours, then, if we own it.
      const existing = await ctx.client.get(jobEntry, namespace, jobNameFor(cronJob, scheduled))
      return controllerOf(existing)?.uid === cronJob.metadata.uid ? existing : undefined
    }
    ctx.events.record(cronJob, 'Warning', 'FailedCreate', `Error creating job: ${(err as Error).message}`)
    throw err
  }
}

async function deleteJob(ctx: ControllerContext, cronJob: KubeObject, name: string): Promise<boolean> {
  try {
    await ctx.client.delete(jobEntry, cronJob.metadata.namespace ?? '', name, { propagationPolicy: 'Background' })
  } catch (err) {
    if (!isNotFound(err)) {
      ctx.events.record(cronJob, 'Warning', 'FailedDelete', `Deleted job: ${(err as Error).message}`)
      return false
    }
  }
  ctx.events.record(cronJob, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`)
  return true
}

async function jobExists(ctx: ControllerContext, ref: JobRef): Promise<boolean> {
  try {
    const job = await ctx.client.get(jobEntry, ref.namespace, ref.name)
    return job.metadata.uid === ref.uid
  } catch (err) {
    if (isNotFound(err)) return false
    throw err
  }
}

/** Go's time.RFC1123Z in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`. */
function rfc1123z(at: Date): string {
  return at.toUTCString().replace('GMT', '+0000')
}
