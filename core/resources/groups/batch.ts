/** batch/v1: Jobs and the CronJobs that start them. */
import { age, humanDuration } from '../../machinery/human-duration.js'
import { applyCronJobDefaultsInSteps, validateCronJobInSteps, validateCronJobUpdateInSteps } from '../batch/cronjob.js'
import { applyJobDefaultsInSteps, generateSelector, jobAsReadBack, validateJobInSteps, validateJobUpdateInSteps } from '../batch/job.js'
import { validateJobStatusUpdate } from '../batch/job-status-rules.js'
import type { ResourceEntry, StrategyContext } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { containerCells, formatLabelSelector, printBool } from '../columns/format.js'
import { at, int, list, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'

/** The pod spec rules that depend on the server (`--allow-privileged`). */
const podOptions = (ctx: StrategyContext) => ({ allowPrivileged: ctx.allowPrivileged ?? false })

function hasCondition(job: KubeObject, type: string): boolean {
  const c = list(at(job, 'status', 'conditions')).find((c) => text(at(c, 'type')) === type)
  return c !== undefined && text(at(c, 'status')) === 'True'
}

function jobStatus(job: KubeObject): string {
  if (hasCondition(job, 'Complete')) return 'Complete'
  if (hasCondition(job, 'Failed')) return 'Failed'
  if (job.metadata.deletionTimestamp) return 'Terminating'
  if (hasCondition(job, 'Suspended')) return 'Suspended'
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget'
  return 'Running'
}

function completions(job: KubeObject): string {
  const succeeded = int(at(job, 'status', 'succeeded'))
  const wanted = at(job, 'spec', 'completions')
  if (typeof wanted === 'number') return `${succeeded}/${wanted}`
  const parallelism = int(at(job, 'spec', 'parallelism'))
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`
}

function jobDuration(job: KubeObject, now: Date): string {
  const start = text(at(job, 'status', 'startTime'))
  if (!start) return ''
  const end = text(at(job, 'status', 'completionTime'))
  return humanDuration((end ? Date.parse(end) : now.getTime()) - Date.parse(start))
}

export const jobs: ResourceEntry = defineResource({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  tracksGeneration: true,
  resource: 'jobs',
  namespaced: true,
  categories: ['all'],
  // jobStatusStrategy: only the status is checked, against the stored one.
  subresources: [{ ...statusSubresource('Job'), validateUpdate: validateJobStatusUpdate }],
  strategy: {
    // batch/v1 keeps a Job's pods when the delete names no propagation policy, and says so.
    orphanDependentsByDefault: true,
    defaultPropagationWarning:
      'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning',
    applyDefaults: applyJobDefaultsInSteps,
    prepareForCreate: (job) => {
      job['status'] = {}
      generateSelector(job)
    },
    readBack: jobAsReadBack,
    validate: (job, ctx) => validateJobInSteps(job, podOptions(ctx)),
    validateUpdate: (job, old, ctx) => validateJobUpdateInSteps(job, old, podOptions(ctx)),
    fieldLabelRefusal: (label) => `field label ${JSON.stringify(label)} not supported for batchv1.Job`,
    fieldSet: (job) => ({ 'status.successful': String(int(at(job, 'status', 'succeeded'))) }),
  },
  columns: [
    nameColumn,
    column('Status', 'Whether the job runs, completed or failed.', jobStatus),
    column('Completions', 'Successful pods out of those wanted.', completions),
    column('Duration', 'How long the job ran.', jobDuration),
    ageColumn,
    wideColumn('Containers', 'The containers of the pod template.', (j) => containerCells(at(j, 'spec', 'template', 'spec')).names),
    wideColumn('Images', 'The images of those containers.', (j) => containerCells(at(j, 'spec', 'template', 'spec')).images),
    wideColumn('Selector', 'The pods it manages.', (j) => formatLabelSelector(at(j, 'spec', 'selector'))),
  ],
})

const jobTemplateSpec = (cj: unknown) => at(cj, 'spec', 'jobTemplate', 'spec', 'template', 'spec')

export const cronJobs: ResourceEntry = defineResource({
  group: 'batch',
  version: 'v1',
  kind: 'CronJob',
  tracksGeneration: true,
  resource: 'cronjobs',
  namespaced: true,
  shortNames: ['cj'],
  categories: ['all'],
  // cronJobStatusStrategy checks nothing of the status it writes.
  subresources: [{ ...statusSubresource('CronJob'), validateUpdate: () => [] }],
  strategy: {
    applyDefaults: applyCronJobDefaultsInSteps,
    prepareForCreate: (cj) => {
      cj['status'] = {}
    },
    validate: (cj, ctx) => validateCronJobInSteps(cj, podOptions(ctx)),
    validateUpdate: (cj, old, ctx) => validateCronJobUpdateInSteps(cj, old, podOptions(ctx)),
  },
  columns: [
    nameColumn,
    column('Schedule', 'When jobs start, in cron syntax.', textAt('spec', 'schedule')),
    column('Timezone', 'The time zone of the schedule.', (cj) => text(at(cj, 'spec', 'timeZone')) || '<none>'),
    column('Suspend', 'Whether new jobs are held back.', (cj) => printBool(at(cj, 'spec', 'suspend')), { type: 'boolean' }),
    column('Active', 'Jobs running now.', (cj) => list(at(cj, 'status', 'active')).length, { type: 'integer' }),
    column('Last Schedule', 'When a job last started.', (cj, now) => {
      const last = text(at(cj, 'status', 'lastScheduleTime'))
      return last ? age(last, now) : '<none>'
    }),
    ageColumn,
    wideColumn('Containers', 'The containers of the job template.', (cj) => containerCells(jobTemplateSpec(cj)).names),
    wideColumn('Images', 'The images of those containers.', (cj) => containerCells(jobTemplateSpec(cj)).images),
    wideColumn('Selector', 'The pods its jobs manage.', (cj) => formatLabelSelector(at(cj, 'spec', 'jobTemplate', 'spec', 'selector'))),
  ],
})

export const batchEntries: ResourceEntry[] = [cronJobs, jobs]
