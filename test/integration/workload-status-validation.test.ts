/**
 * Writes through the `status` subresource of the workload controllers'
 * objects and the autoscaler are checked as upstream's status strategies
 * check them: the status rules alone (never the spec's), each refusal a 422
 * with upstream's message that leaves the stored status as it was, and the
 * writes a controller makes still accepted.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const NS = '/namespaces/default'
const DEPLOYMENTS = `/apis/apps/v1${NS}/deployments`
const REPLICA_SETS = `/apis/apps/v1${NS}/replicasets`
const STATEFUL_SETS = `/apis/apps/v1${NS}/statefulsets`
const DAEMON_SETS = `/apis/apps/v1${NS}/daemonsets`
const CONTROLLERS = `/api/v1${NS}/replicationcontrollers`
const HPAS_V2 = `/apis/autoscaling/v2${NS}/horizontalpodautoscalers`
const HPAS_V1 = `/apis/autoscaling/v1${NS}/horizontalpodautoscalers`
const JOBS = `/apis/batch/v1${NS}/jobs`
const CRON_JOBS = `/apis/batch/v1${NS}/cronjobs`

const labels = { app: 'web' }
const containers = [{ name: 'c', image: 'nginx' }]
const template = { metadata: { labels }, spec: { containers } }
const jobTemplate = { spec: { containers, restartPolicy: 'Never' } }

let api: TestClient

async function create(collection: string, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(collection, body)
  assert.equal(res.status, 201, res.text)
  return `${collection}/${res.body.metadata.name}`
}

/** Writes the status through `status` from a fresh read. */
async function putStatus(path: string, status: Record<string, unknown>) {
  const current = (await api.get(path)).body
  return api.put(`${path}/status`, { ...current, status })
}

async function accepts(path: string, status: Record<string, unknown>): Promise<void> {
  const res = await putStatus(path, status)
  assert.equal(res.status, 200, res.text)
}

/** A 422 with exactly these field errors, and the stored status unchanged. */
async function refuses(path: string, status: Record<string, unknown>, subject: string, errors: string[]): Promise<void> {
  const stored = (await api.get(path)).body.status
  const res = await putStatus(path, status)
  assert.equal(res.status, 422, res.text)
  const detail = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`
  assert.equal(res.body.message, `${subject} is invalid: ${detail}`)
  assert.deepEqual((await api.get(path)).body.status, stored, 'nothing was stored')
}

describe('workload status writes', () => {
  before(async () => {
    api = await startServer()
  })

  it('Deployment: non-negative counts, parts no larger than the replicas, available no more than ready', async () => {
    const path = await create(DEPLOYMENTS, { metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: labels }, template } })
    const subject = 'Deployment.apps "web"'
    await refuses(path, { replicas: -1 }, subject, [
      'status.replicas: Invalid value: -1: must be greater than or equal to 0',
      'status.updatedReplicas: Invalid value: 0: cannot be greater than status.replicas',
      'status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas',
    ])
    await refuses(path, { observedGeneration: -1, unavailableReplicas: -2, collisionCount: -3 }, subject, [
      'status.observedGeneration: Invalid value: -1: must be greater than or equal to 0',
      'status.unavailableReplicas: Invalid value: -2: must be greater than or equal to 0',
      'status.collisionCount: Invalid value: -3: must be greater than or equal to 0',
    ])
    await refuses(path, { replicas: 2, readyReplicas: 1, availableReplicas: 2, updatedReplicas: 3 }, subject, [
      'status.updatedReplicas: Invalid value: 3: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas',
    ])
    await accepts(path, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1, collisionCount: 2 })
  })

  it('Deployment: the collision count never goes down, nor goes away', async () => {
    const path = await create(DEPLOYMENTS, { metadata: { name: 'collisions' }, spec: { selector: { matchLabels: labels }, template } })
    await accepts(path, { collisionCount: 2 })
    const subject = 'Deployment.apps "collisions"'
    await refuses(path, { collisionCount: 1 }, subject, ['status.collisionCount: Invalid value: 1: cannot be decremented'])
    await refuses(path, {}, subject, ['status.collisionCount: Invalid value: 0: cannot be decremented'])
    await accepts(path, { collisionCount: 3 })
  })

  it('checks the status alone: a status write is not held to the spec rules, and leaves the spec as stored', async () => {
    const path = await create(DEPLOYMENTS, { metadata: { name: 'spec-kept' }, spec: { replicas: 1, selector: { matchLabels: labels }, template } })
    const current = (await api.get(path)).body
    const res = await api.put(`${path}/status`, { ...current, spec: { ...current.spec, replicas: -5, template: {} }, status: { replicas: 1 } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.spec.replicas, 1)
    assert.equal(res.body.status.replicas, 1)
  })

  it('ReplicaSet and ReplicationController: the same rules on the same counters', async () => {
    const rs = await create(REPLICA_SETS, { metadata: { name: 'rs' }, spec: { replicas: 2, selector: { matchLabels: labels }, template } })
    const rc = await create(CONTROLLERS, { metadata: { name: 'rc' }, spec: { replicas: 2, selector: labels, template } })
    const errors = [
      'status.fullyLabeledReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.observedGeneration: Invalid value: -2: must be greater than or equal to 0',
      'status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 4: cannot be greater than readyReplicas',
    ]
    const bad = { replicas: 2, fullyLabeledReplicas: -1, readyReplicas: 3, availableReplicas: 4, observedGeneration: -2 }
    await refuses(rs, bad, 'ReplicaSet.apps "rs"', errors)
    await refuses(rc, bad, 'ReplicationController "rc"', errors)
    await refuses(rc, { replicas: -1 }, 'ReplicationController "rc"', [
      'status.replicas: Invalid value: -1: must be greater than or equal to 0',
      ...['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'].map((field) => `status.${field}: Invalid value: 0: cannot be greater than status.replicas`),
    ])
    const good = { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1, observedGeneration: 1 }
    await accepts(rs, good)
    await accepts(rc, good)
  })

  it('StatefulSet: its counters, their bounds, and the collision count', async () => {
    const path = await create(STATEFUL_SETS, { metadata: { name: 'db' }, spec: { serviceName: 'db', selector: { matchLabels: labels }, template } })
    const subject = 'StatefulSet.apps "db"'
    await refuses(path, { replicas: 1, readyReplicas: -1, currentReplicas: 2, updatedReplicas: 2, observedGeneration: -1 }, subject, [
      'status.readyReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.observedGeneration: Invalid value: -1: must be greater than or equal to 0',
      'status.currentReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 0: cannot be greater than status.readyReplicas',
    ])
    await refuses(path, { replicas: 3, readyReplicas: 1, availableReplicas: 2 }, subject, [
      'status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas',
    ])
    await accepts(path, { replicas: 3, readyReplicas: 2, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 2, collisionCount: 1 })
    await refuses(path, { replicas: 3, collisionCount: 0 }, subject, ['status.collisionCount: Invalid value: 0: cannot be decremented'])
  })

  it('DaemonSet: every counter non-negative, the collision count never down', async () => {
    const path = await create(DAEMON_SETS, { metadata: { name: 'agent' }, spec: { selector: { matchLabels: labels }, template } })
    const subject = 'DaemonSet.apps "agent"'
    await refuses(
      path,
      { currentNumberScheduled: -1, numberMisscheduled: -1, desiredNumberScheduled: -1, numberReady: -1, observedGeneration: -1, updatedNumberScheduled: -1, numberAvailable: -1, numberUnavailable: -1, collisionCount: -1 },
      subject,
      [
        'currentNumberScheduled',
        'numberMisscheduled',
        'desiredNumberScheduled',
        'numberReady',
        'observedGeneration',
        'updatedNumberScheduled',
        'numberAvailable',
        'numberUnavailable',
        'collisionCount',
      ].map((field) => `status.${field}: Invalid value: -1: must be greater than or equal to 0`),
    )
    await accepts(path, { currentNumberScheduled: 2, numberMisscheduled: 0, desiredNumberScheduled: 2, numberReady: 1, numberUnavailable: 1, collisionCount: 4 })
    await refuses(path, { currentNumberScheduled: 2, desiredNumberScheduled: 2, numberReady: 1, collisionCount: 3 }, subject, [
      'status.collisionCount: Invalid value: 3: cannot be decremented',
    ])
  })

  it('HorizontalPodAutoscaler: replica counts never negative, through v2 and v1', async () => {
    const spec = { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 4 }
    const v2 = await create(HPAS_V2, { metadata: { name: 'scaler' }, spec })
    const subject = 'HorizontalPodAutoscaler.autoscaling "scaler"'
    const both = ['status.currentReplicas: Invalid value: -1: must be greater than or equal to 0', 'status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0']
    await refuses(v2, { currentReplicas: -1, desiredReplicas: -2 }, subject, both)
    const v1 = `${HPAS_V1}/scaler`
    await refuses(v1, { currentReplicas: -1, desiredReplicas: -2 }, subject, both)
    await accepts(v1, { currentReplicas: 2, desiredReplicas: 3 })
    await accepts(v2, { currentReplicas: 3, desiredReplicas: 3 })
  })

  it('CronJob: upstream checks nothing of the status written', async () => {
    const path = await create(CRON_JOBS, { metadata: { name: 'nightly' }, spec: { schedule: '0 1 * * *', jobTemplate: { spec: { template: jobTemplate } } } })
    await accepts(path, { active: [{ kind: 'Job', name: 'nightly-1' }], lastScheduleTime: '2024-01-01T01:00:00Z' })
  })
})

describe('Job status writes', () => {
  const T0 = '2024-01-01T00:00:00Z'
  const T1 = '2024-01-01T00:01:00Z'

  before(async () => {
    api = await startServer()
  })

  const job = (name: string, spec: Record<string, unknown> = {}) => create(JOBS, { metadata: { name }, spec: { ...spec, template: jobTemplate } })

  it('counters are never negative, and failed and succeeded never go down', async () => {
    const path = await job('counts')
    const subject = 'Job.batch "counts"'
    await refuses(path, { succeeded: -1 }, subject, [
      'status.succeeded: Invalid value: -1: must be greater than or equal to 0',
      'status.succeeded: Invalid value: -1: cannot decrease the succeeded counter',
    ])
    await refuses(path, { active: -1, ready: -1, terminating: -1 }, subject, [
      'status.active: Invalid value: -1: must be greater than or equal to 0',
      'status.ready: Invalid value: -1: must be greater than or equal to 0',
      'status.terminating: Invalid value: -1: must be greater than or equal to 0',
    ])
    await accepts(path, { startTime: T0, active: 2, ready: 1, terminating: 0, failed: 2, succeeded: 1 })
    await refuses(path, { startTime: T0, active: 2, failed: 1, succeeded: 0 }, subject, [
      'status.failed: Invalid value: 1: cannot decrease the failed counter',
      'status.succeeded: Invalid value: 0: cannot decrease the succeeded counter',
    ])
    await refuses(path, { startTime: T0, active: 1, ready: 2, failed: 2, succeeded: 1 }, subject, ['status.ready: Invalid value: 2: cannot set more ready pods than active'])
    await refuses(path, { active: 2, failed: 2, succeeded: 1 }, subject, ['status.startTime: Required value: startTime cannot be removed for unsuspended job'])
  })

  it('names each uncounted pod once, with a uid', async () => {
    const path = await job('uncounted')
    await refuses(path, { uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } }, 'Job.batch "uncounted"', [
      'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
      'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
    ])
    await accepts(path, { uncountedTerminatedPods: { succeeded: ['a'], failed: ['b'] } })
  })

  it('a Job completes as the controller completes it, and stays complete', async () => {
    const path = await job('done')
    const subject = 'Job.batch "done"'
    const met = { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached' }
    const complete = { type: 'Complete', status: 'True', reason: 'CompletionsReached' }
    await accepts(path, { startTime: T0, active: 1, ready: 1 })
    await refuses(path, { startTime: T0, succeeded: 1, completionTime: T1, conditions: [complete] }, subject, [
      'status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition',
    ])
    await refuses(path, { startTime: T0, succeeded: 1, conditions: [met, complete] }, subject, ['status.completionTime: Required value: completionTime is required for Complete jobs'])
    await refuses(path, { startTime: T1, succeeded: 1, completionTime: T0, conditions: [met, complete] }, subject, [
      'status.completionTime: Invalid value: 2024-01-01 00:00:00 +0000 UTC: completionTime cannot be set before startTime',
      'status.startTime: Required value: startTime cannot be removed for unsuspended job',
    ])
    await refuses(path, { startTime: T0, active: 1, terminating: 1, succeeded: 1, completionTime: T1, conditions: [met, complete] }, subject, [
      'status.active: Invalid value: 1: active>0 is invalid for finished job',
      'status.terminating: Invalid value: 1: terminating>0 is invalid for finished job',
    ])
    await accepts(path, { startTime: T0, succeeded: 1, conditions: [met] })
    await accepts(path, { startTime: T0, succeeded: 1, completionTime: T1, conditions: [met, complete] })
    await refuses(path, { startTime: T0, succeeded: 1, completionTime: T1, conditions: [met] }, subject, [
      'status.completionTime: Invalid value: 2024-01-01 00:01:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition',
      'status.conditions: Invalid value: cannot disable the terminal Complete=True condition',
    ])
    await refuses(path, { startTime: T0, succeeded: 1, completionTime: '2024-01-01T00:02:00Z', conditions: [met, complete] }, subject, [
      'status.completionTime: Invalid value: 2024-01-01 00:02:00 +0000 UTC: completionTime cannot be mutated',
    ])
    await refuses(path, { startTime: T0, succeeded: 1, completionTime: T1, conditions: [complete] }, subject, [
      'status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition',
      'status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition',
    ])
    await refuses(path, { startTime: T0, succeeded: 1, completionTime: T1, conditions: [met, complete], uncountedTerminatedPods: { succeeded: ['x'] } }, subject, [
      'status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{"x"}, Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for finished job',
    ])
  })

  it('a Job fails after FailureTarget, and never also succeeds', async () => {
    const path = await job('broken')
    const subject = 'Job.batch "broken"'
    const target = { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' }
    const failed = { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }
    await refuses(path, { startTime: T0, failed: 7, conditions: [failed] }, subject, [
      'status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition',
    ])
    await refuses(path, { startTime: T0, conditions: [target, { type: 'SuccessCriteriaMet', status: 'True' }] }, subject, [
      'status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions',
    ])
    await accepts(path, { startTime: T0, failed: 7, conditions: [target] })
    await accepts(path, { startTime: T0, failed: 7, conditions: [target, failed] })
    await refuses(path, { startTime: T0, failed: 7, conditions: [target, failed, { type: 'Complete', status: 'True' }] }, subject, [
      'status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions',
      'status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions',
      'status.completionTime: Required value: completionTime is required for Complete jobs',
      'status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition',
    ])
    await refuses(path, { startTime: T0, failed: 7, conditions: [] }, subject, [
      'status.conditions: Invalid value: cannot disable the terminal Failed=True condition',
      'status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition',
    ])
  })

  it('completed and failed indexes: well formed, below completions, only where they apply, apart', async () => {
    const plain = await job('plain')
    await refuses(plain, { completedIndexes: '0', failedIndexes: '1' }, 'Job.batch "plain"', [
      'status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode',
      'status.failedIndexes: Invalid value: "1": cannot set non-null failedIndexes when backoffLimitPerIndex is null',
    ])
    const indexed = await job('indexed', { completionMode: 'Indexed', completions: 4, parallelism: 2, backoffLimitPerIndex: 1 })
    const subject = 'Job.batch "indexed"'
    await refuses(indexed, { completedIndexes: '0,2-1' }, subject, [
      'status.completedIndexes: Invalid value: "0,2-1": error parsing completedIndexes: non-increasing order, previous: 2, current: 1',
    ])
    await refuses(indexed, { completedIndexes: '1,0' }, subject, ['status.completedIndexes: Invalid value: "1,0": error parsing completedIndexes: non-increasing order, previous: 1, current: 0'])
    await refuses(indexed, { completedIndexes: '4' }, subject, ['status.completedIndexes: Invalid value: "4": error parsing completedIndexes: too large index: "4"'])
    await refuses(indexed, { failedIndexes: 'x,1-2-3' }, subject, ['status.failedIndexes: Invalid value: "x,1-2-3": error parsing failedIndexes: cannot convert string to integer for index: "x"'])
    await refuses(indexed, { failedIndexes: '1-2-3' }, subject, [
      `status.failedIndexes: Invalid value: "1-2-3": error parsing failedIndexes: the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`,
    ])
    await refuses(indexed, { completedIndexes: '0-1', failedIndexes: '1,3' }, subject, ['status.failedIndexes: Invalid value: "1,3": failedIndexes and completedIndexes overlap at index: 1'])
    await accepts(indexed, { completedIndexes: '0-1', failedIndexes: '2' })
  })

  it('an Indexed Job whose parallelism follows its completions may lose successes when scaled down', async () => {
    const elastic = await job('elastic', { completionMode: 'Indexed', completions: 3, parallelism: 3 })
    await accepts(elastic, { succeeded: 3, completedIndexes: '0-2' })
    await accepts(elastic, { succeeded: 1, completedIndexes: '0' })
  })
})
