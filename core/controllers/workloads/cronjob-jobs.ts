/**
 * The Jobs of a CronJob as its controller handles them (upstream's
 * pkg/controller/cronjob/utils.go): the Job made for a scheduled time, named
 * after it in minutes since the epoch, whether a Job finished and how, and
 * which finished Jobs the history limits let go.
 */
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { conditionsOf } from './object-keys.js'

export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp'

type Obj = Record<string, unknown>

export const jobNameFor = (cronJob: KubeObject, scheduled: Date): string => `${cronJob.metadata.name}-${Math.floor(scheduled.getTime() / 60_000)}`

/** The Job of `scheduled`, from spec.jobTemplate, owned by the CronJob. */
export function jobFromTemplate(cronJob: KubeObject, scheduled: Date, timeZone: string): KubeObject {
  const template = structuredClone(((cronJob['spec'] as Obj)['jobTemplate'] as { metadata?: Obj; spec?: Obj } | undefined) ?? {})
  const meta = template.metadata ?? {}
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(cronJob, scheduled),
      namespace: cronJob.metadata.namespace,
      labels: { ...((meta['labels'] as Record<string, string> | undefined) ?? {}) },
      annotations: { ...((meta['annotations'] as Record<string, string> | undefined) ?? {}), [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(scheduled, timeZone) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob.metadata.name ?? '', uid: cronJob.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: template.spec ?? {},
  }
}

/** The finishing condition (Complete or Failed) of a Job, if it finished. */
export function finishedAs(job: KubeObject): 'Complete' | 'Failed' | undefined {
  const done = conditionsOf(job['status']).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
  return done?.type as 'Complete' | 'Failed' | undefined
}

/** The finished Jobs beyond the history limits, oldest first by start time (upstream's byJobStartTime). */
export function jobsBeyondHistory(cronJob: KubeObject, jobs: KubeObject[]): KubeObject[] {
  const spec = cronJob['spec'] as Obj
  const excess = (kind: 'Complete' | 'Failed', limit: unknown): KubeObject[] => {
    if (typeof limit !== 'number') return []
    const finished = jobs.filter((j) => finishedAs(j) === kind).sort(byStartTime)
    return finished.slice(0, Math.max(0, finished.length - limit))
  }
  return [...excess('Complete', spec['successfulJobsHistoryLimit']), ...excess('Failed', spec['failedJobsHistoryLimit'])]
}

function byStartTime(a: KubeObject, b: KubeObject): number {
  const start = (j: KubeObject) => ((j['status'] as Obj | undefined)?.['startTime'] as string | undefined) ?? ''
  const [x, y] = [start(a), start(b)]
  // Jobs that never started sort last, then by name.
  if (x !== y) return !x ? 1 : !y ? -1 : x.localeCompare(y)
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')
}

/** Go's time.RFC3339 of `at` in `zone` (`2026-03-08T09:00:00+09:00`, `Z` in UTC). */
export function rfc3339In(at: Date, zone: string): string {
  if (zone === 'UTC') return formatTimestamp(at)
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  )
  const wall = Date.UTC(Number(parts['year']), Number(parts['month']) - 1, Number(parts['day']), Number(parts['hour']), Number(parts['minute']), Number(parts['second']))
  const offsetMinutes = Math.round((wall - Math.floor(at.getTime() / 1000) * 1000) / 60_000)
  if (offsetMinutes === 0) return `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}Z`
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
  return `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}${offset}`
}
