import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer, manualClock } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { events } from '../../core/resources/core/events.js'
import { pods } from '../../core/resources/core/pods.js'
import { cronJobs, jobs } from '../../core/resources/groups/batch.js'
import { untilPasses } from './harness.js'

const NS = 'default'
const START = Date.parse('2026-01-01T00:00:30Z')
const minutes = (iso: string) => Date.parse(iso) / 60_000

function cronJob(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: NS },
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { metadata: { labels: { app: name } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'tick', image: 'busybox' }] } } } },
      ...spec,
    },
  }
}

describe('cronjob controller (RBAC)', () => {
  const clock = manualClock(START)
  let server: ApiServer
  before(async () => {
    server = createApiServer({ controllers: ['cronjob', 'job'], authorizationModes: ['RBAC'] }, { now: clock.now })
    await server.ready
  })
  after(() => server.shutdown())

  const jobsOf = async (app: string) => (await server.client.list(jobs, NS, { labelSelector: `app=${app}` })).items
  const status = async (name: string) => (await server.client.get(cronJobs, NS, name))['status'] as Record<string, any>

  async function completeJob(jobName: string): Promise<void> {
    let pod: KubeObject | undefined
    await untilPasses(async () => {
      pod = (await server.client.list(pods, NS, { labelSelector: `job-name=${jobName}` })).items[0]
      assert.ok(pod, 'the Job has a pod')
    })
    await server.client.updateStatus(pods, NS, { ...pod!, status: { phase: 'Succeeded' } })
    await untilPasses(async () => assert.ok(((await server.client.get(jobs, NS, jobName))['status'] as { completionTime?: string }).completionTime, 'the Job completes'))
  }

  it('creates a Job at each scheduled time, tracks it and keeps only the history asked for', async () => {
    await server.client.create(cronJobs, NS, cronJob('ticker', { successfulJobsHistoryLimit: 1, timeZone: 'Asia/Tokyo' }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal((await jobsOf('ticker')).length, 0, 'nothing runs before the schedule comes due')

    clock.set(Date.parse('2026-01-01T00:05:10Z'))
    const firstName = `ticker-${minutes('2026-01-01T00:05:00Z')}`
    await untilPasses(async () => {
      const [job] = await jobsOf('ticker')
      assert.equal(job?.metadata.name, firstName)
      assert.equal(job.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2026-01-01T09:05:00+09:00')
      assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'CronJob')
      const s = await status('ticker')
      assert.equal(s['lastScheduleTime'], '2026-01-01T00:05:00Z')
      assert.deepEqual(s['active'].map((ref: { name: string }) => ref.name), [firstName])
    })

    await completeJob(firstName)
    await untilPasses(async () => {
      const s = await status('ticker')
      assert.equal(s['active'], undefined)
      assert.ok(s['lastSuccessfulTime'], 'lastSuccessfulTime is set')
    })

    clock.set(Date.parse('2026-01-01T00:10:05Z'))
    const secondName = `ticker-${minutes('2026-01-01T00:10:00Z')}`
    await untilPasses(async () => assert.ok((await jobsOf('ticker')).some((j) => j.metadata.name === secondName), 'the second Job is made'))
    await completeJob(secondName)
    // successfulJobsHistoryLimit 1: the older finished Job goes.
    await untilPasses(async () => assert.deepEqual((await jobsOf('ticker')).map((j) => j.metadata.name), [secondName]))
    const reasons = (await server.client.list(events, NS)).items.filter((e) => (e['involvedObject'] as { name: string }).name === 'ticker').map((e) => e['reason'])
    for (const reason of ['SuccessfulCreate', 'SawCompletedJob', 'SuccessfulDelete']) assert.ok(reasons.includes(reason), reason)
  })

  it('does not start a second Job while one runs under concurrencyPolicy Forbid', async () => {
    clock.set(Date.parse('2026-01-01T00:11:00Z'))
    await server.client.create(cronJobs, NS, cronJob('single', { concurrencyPolicy: 'Forbid' }))
    clock.set(Date.parse('2026-01-01T00:15:02Z'))
    await untilPasses(async () => assert.equal((await jobsOf('single')).length, 1))
    clock.set(Date.parse('2026-01-01T00:20:02Z'))
    await untilPasses(async () => {
      const reasons = (await server.client.list(events, NS)).items.filter((e) => (e['involvedObject'] as { name: string }).name === 'single').map((e) => e['reason'])
      assert.ok(reasons.includes('JobAlreadyActive'), 'a JobAlreadyActive event')
    })
    assert.equal((await jobsOf('single')).length, 1)
  })

  it('replaces the running Job under concurrencyPolicy Replace', async () => {
    clock.set(Date.parse('2026-01-01T00:21:00Z'))
    await server.client.create(cronJobs, NS, cronJob('fresh', { concurrencyPolicy: 'Replace' }))
    clock.set(Date.parse('2026-01-01T00:25:02Z'))
    await untilPasses(async () => assert.equal((await jobsOf('fresh')).length, 1))
    clock.set(Date.parse('2026-01-01T00:30:02Z'))
    const latest = `fresh-${minutes('2026-01-01T00:30:00Z')}`
    await untilPasses(async () => {
      const live = (await jobsOf('fresh')).filter((j) => !j.metadata.deletionTimestamp)
      assert.deepEqual(live.map((j) => j.metadata.name), [latest])
      assert.deepEqual((await status('fresh'))['active'].map((ref: { name: string }) => ref.name), [latest])
    })
  })

  it('does not start a run missed by more than startingDeadlineSeconds, and starts the next one', async () => {
    clock.set(Date.parse('2026-01-01T00:31:00Z'))
    await server.client.create(cronJobs, NS, cronJob('strict', { schedule: '0 * * * *', startingDeadlineSeconds: 10, suspend: true }))
    clock.set(Date.parse('2026-01-01T01:00:30Z'))
    await server.client.patch(cronJobs, NS, 'strict', 'merge', { spec: { suspend: false } })
    await new Promise((resolve) => setTimeout(resolve, 800))
    assert.equal((await jobsOf('strict')).length, 0, 'the 01:00 run was missed by more than 10 s')
    clock.set(Date.parse('2026-01-01T02:00:05Z'))
    await untilPasses(async () => assert.deepEqual((await jobsOf('strict')).map((j) => j.metadata.name), [`strict-${minutes('2026-01-01T02:00:00Z')}`]))
  })
})
