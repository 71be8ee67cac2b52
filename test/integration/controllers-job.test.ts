import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer, manualClock } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { events } from '../../core/resources/core/events.js'
import { pods } from '../../core/resources/core/pods.js'
import { namespaces } from '../../core/resources/core/namespaces.js'
import { resourceQuotas } from '../../core/resources/core/quotas.js'
import { jobs } from '../../core/resources/groups/batch.js'
import { untilPasses } from './harness.js'

const NS = 'default'

function job(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox' }] } }, ...spec },
  }
}

async function podsOf(server: ApiServer, name: string): Promise<KubeObject[]> {
  return (await server.client.list(pods, NS, { labelSelector: `batch.kubernetes.io/job-name=${name}` })).items
}

async function finishPod(server: ApiServer, pod: KubeObject, phase: 'Succeeded' | 'Failed'): Promise<void> {
  const fresh = await server.client.get(pods, NS, pod.metadata.name!)
  await server.client.updateStatus(pods, NS, { ...fresh, status: { ...(fresh['status'] as object), phase } })
}

const conditionTypes = (j: KubeObject): string[] => ((j['status'] as { conditions?: { type: string; status: string }[] }).conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type)

async function reasonsFor(server: ApiServer, name: string): Promise<string[]> {
  return (await server.client.list(events, NS)).items.filter((e) => (e['involvedObject'] as { name: string }).name === name).map((e) => e['reason'] as string)
}

function runJobTests(label: string, options: Parameters<typeof createApiServer>[0]): void {
  describe(`job controller (${label})`, () => {
    let server: ApiServer
    before(async () => {
      server = createApiServer({ controllers: ['job'], ...options })
      await server.ready
    })
    after(() => server.shutdown())

    it('runs a Job of completions 3 and parallelism 2 to Complete as its pods succeed', async () => {
      await server.client.create(jobs, NS, job('three', { completions: 3, parallelism: 2 }))
      let first: KubeObject[] = []
      await untilPasses(async () => {
        first = await podsOf(server, 'three')
        assert.equal(first.length, 2)
      })
      const created = await server.client.get(jobs, NS, 'three')
      for (const pod of first) {
        assert.match(pod.metadata.name!, /^three-/)
        assert.deepEqual(pod.metadata.finalizers, ['batch.kubernetes.io/job-tracking'])
        assert.equal(pod.metadata.labels?.['job-name'], 'three')
        assert.equal(pod.metadata.labels?.['batch.kubernetes.io/controller-uid'], created.metadata.uid)
        assert.deepEqual(pod.metadata.ownerReferences?.[0], { apiVersion: 'batch/v1', kind: 'Job', name: 'three', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true })
      }
      await untilPasses(async () => assert.equal(((await server.client.get(jobs, NS, 'three'))['status'] as { active: number }).active, 2))
      for (const pod of first) await finishPod(server, pod, 'Succeeded')
      let third: KubeObject | undefined
      await untilPasses(async () => {
        third = (await podsOf(server, 'three')).find((p) => !first.some((f) => f.metadata.name === p.metadata.name))
        assert.ok(third, 'a third pod is made')
      })
      await finishPod(server, third!, 'Succeeded')
      await untilPasses(async () => {
        const done = await server.client.get(jobs, NS, 'three')
        const status = done['status'] as Record<string, unknown>
        assert.deepEqual(conditionTypes(done), ['SuccessCriteriaMet', 'Complete'])
        assert.equal(status['succeeded'], 3)
        // No pod active: JobStatus.active is a plain int with omitempty, so Go leaves its 0 out.
        assert.equal('active' in status, false)
        assert.ok(status['startTime'] && status['completionTime'], 'startTime and completionTime are set')
      })
      // Counted pods lose the tracking finalizer.
      for (const pod of await podsOf(server, 'three')) assert.deepEqual(pod.metadata.finalizers ?? [], [])
      await untilPasses(async () => {
        const reasons = await reasonsFor(server, 'three')
        assert.equal(reasons.filter((r) => r === 'SuccessfulCreate').length, 3)
        assert.ok(reasons.includes('Completed'), 'a Completed event')
      })
    })

    it('adopts an orphan its selector matches and releases a pod that stops matching', async () => {
      await server.client.create(jobs, NS, job('claims', { parallelism: 2, completions: 2 }))
      let two: KubeObject[] = []
      await untilPasses(async () => {
        two = await podsOf(server, 'claims')
        assert.equal(two.length, 2)
      })
      const uid = (await server.client.get(jobs, NS, 'claims')).metadata.uid
      // Orphaned: its owner reference taken off, as upstream's conformance spec does.
      const orphan = await server.client.get(pods, NS, two[0]!.metadata.name!)
      await server.client.update(pods, NS, { ...orphan, metadata: { ...orphan.metadata, ownerReferences: [] } })
      await untilPasses(async () => {
        const back = await server.client.get(pods, NS, orphan.metadata.name!)
        assert.equal(back.metadata.ownerReferences?.[0]?.uid, uid, 'adopted again')
        assert.deepEqual(back.metadata.finalizers, ['batch.kubernetes.io/job-tracking'])
      })
      // Relabelled away from the selector: released, finalizer and all, and a replacement made.
      const leaving = await server.client.get(pods, NS, two[1]!.metadata.name!)
      const labels = { ...leaving.metadata.labels, 'batch.kubernetes.io/controller-uid': 'someone-else', 'controller-uid': 'someone-else' }
      await server.client.update(pods, NS, { ...leaving, metadata: { ...leaving.metadata, labels } })
      await untilPasses(async () => {
        const left = await server.client.get(pods, NS, leaving.metadata.name!)
        assert.deepEqual(left.metadata.ownerReferences ?? [], [], 'released')
        assert.deepEqual(left.metadata.finalizers ?? [], [])
        assert.equal(((await server.client.get(jobs, NS, 'claims'))['status'] as { active: number }).active, 2, 'a replacement runs')
      })
    })

    it('fails a Job whose pods failed more often than its backoffLimit', async () => {
      await server.client.create(jobs, NS, job('fails', { backoffLimit: 0 }))
      let pod: KubeObject | undefined
      await untilPasses(async () => {
        pod = (await podsOf(server, 'fails'))[0]
        assert.ok(pod, 'the Job has a pod')
      })
      await finishPod(server, pod!, 'Failed')
      await untilPasses(async () => {
        const failed = await server.client.get(jobs, NS, 'fails')
        assert.deepEqual(conditionTypes(failed), ['FailureTarget', 'Failed'])
        const condition = (failed['status'] as { conditions: { type: string; reason: string; message: string }[] }).conditions.find((c) => c.type === 'Failed')
        assert.equal(condition?.reason, 'BackoffLimitExceeded')
        assert.equal(condition?.message, 'Job has reached the specified backoff limit')
        assert.equal((failed['status'] as { failed: number }).failed, 1)
        assert.ok(!(failed['status'] as Record<string, unknown>)['completionTime'], 'a failed Job has no completionTime')
      })
      await untilPasses(async () => assert.ok((await reasonsFor(server, 'fails')).includes('BackoffLimitExceeded'), 'a BackoffLimitExceeded event'))
    })

    it('holds a suspended Job back and starts its pods when resumed', async () => {
      await server.client.create(jobs, NS, job('held', { suspend: true, parallelism: 2, completions: 2 }))
      await untilPasses(async () => {
        const held = await server.client.get(jobs, NS, 'held')
        const suspended = (held['status'] as { conditions?: { type: string; status: string; reason: string }[] }).conditions?.find((c) => c.type === 'Suspended')
        assert.equal(suspended?.status, 'True')
        assert.equal(suspended?.reason, 'JobSuspended')
      })
      assert.equal((await podsOf(server, 'held')).length, 0)
      await server.client.patch(jobs, NS, 'held', 'merge', { spec: { suspend: false } })
      await untilPasses(async () => assert.equal((await podsOf(server, 'held')).length, 2))
      await untilPasses(async () => {
        const resumed = await server.client.get(jobs, NS, 'held')
        const suspended = (resumed['status'] as { conditions: { type: string; status: string; reason: string }[] }).conditions.find((c) => c.type === 'Suspended')
        assert.equal(suspended?.status, 'False')
        assert.equal(suspended?.reason, 'JobResumed')
      })
      // Suspending again deletes the running pods.
      await server.client.patch(jobs, NS, 'held', 'merge', { spec: { suspend: true } })
      await untilPasses(async () => assert.equal((await podsOf(server, 'held')).length, 0))
    })

    it('gives each pod of an Indexed Job its completion index', async () => {
      await server.client.create(jobs, NS, job('indexed', { completionMode: 'Indexed', completions: 2, parallelism: 2 }))
      let made: KubeObject[] = []
      await untilPasses(async () => {
        made = await podsOf(server, 'indexed')
        assert.equal(made.length, 2)
      })
      const indexes = made.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort()
      assert.deepEqual(indexes, ['0', '1'])
      for (const pod of made) {
        const index = pod.metadata.annotations?.['batch.kubernetes.io/job-completion-index']
        assert.equal((pod['spec'] as { hostname: string }).hostname, `indexed-${index}`)
        assert.ok(pod.metadata.name!.startsWith(`indexed-${index}-`))
        await finishPod(server, pod, 'Succeeded')
      }
      await untilPasses(async () => {
        const done = await server.client.get(jobs, NS, 'indexed')
        assert.equal((done['status'] as { completedIndexes: string }).completedIndexes, '0-1')
        assert.ok(conditionTypes(done).includes('Complete'), 'the Job completes')
      })
    })
  })
}

describe('job controller on a clock moved by hand', () => {
  it('waits 10 s after a failure before starting the replacement pod', async () => {
    const clock = manualClock()
    const server = createApiServer({ controllers: ['job'] }, { now: clock.now })
    try {
      await server.ready
      await server.client.create(jobs, NS, job('retry', { backoffLimit: 2 }))
      let first: KubeObject | undefined
      await untilPasses(async () => {
        first = (await podsOf(server, 'retry'))[0]
        assert.ok(first, 'the Job has a pod')
      })
      await finishPod(server, first!, 'Failed')
      // The pass that counted the failure is the one that held the replacement back.
      await untilPasses(async () => assert.equal(((await server.client.get(jobs, NS, 'retry'))['status'] as { failed?: number }).failed, 1))
      const running = async () => (await podsOf(server, 'retry')).filter((p) => (p['status'] as { phase?: string }).phase !== 'Failed').length
      assert.equal(await running(), 0, 'no replacement within the back-off')
      clock.advance(11_000)
      await untilPasses(async () => assert.equal(await running(), 1))
    } finally {
      await server.shutdown()
    }
  })


  it('fails a Job that ran longer than activeDeadlineSeconds and deletes its pods', async () => {
    const clock = manualClock()
    const server = createApiServer({ controllers: ['job'] }, { now: clock.now })
    try {
      await server.ready
      await server.client.create(jobs, NS, job('slow', { activeDeadlineSeconds: 30, parallelism: 2, completions: 4 }))
      await untilPasses(async () => assert.equal((await podsOf(server, 'slow')).length, 2))
      clock.advance(31_000)
      await untilPasses(async () => {
        const failed = await server.client.get(jobs, NS, 'slow')
        assert.deepEqual(conditionTypes(failed), ['FailureTarget', 'Failed'])
        const condition = (failed['status'] as { conditions: { type: string; reason: string }[] }).conditions.find((c) => c.type === 'Failed')
        assert.equal(condition?.reason, 'DeadlineExceeded')
        assert.equal((await podsOf(server, 'slow')).length, 0)
      })
    } finally {
      await server.shutdown()
    }
  })
})

runJobTests('no authorization', {})
runJobTests('RBAC', { authorizationModes: ['RBAC'] })

describe('job controller with a huge parallelism', () => {
  it('creates a bounded batch at a time and stops at the first refusal (a quota of 3 pods), staying responsive', { timeout: 60_000 }, async () => {
    const server = createApiServer({ controllers: ['job'] })
    await server.ready
    try {
      await server.client.create(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capped' } })
      await server.client.create(resourceQuotas, 'capped', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods', namespace: 'capped' }, spec: { hard: { pods: '3' } } })
      const huge = { ...job('huge', { parallelism: 2147483647, completions: 2147483647 }), metadata: { name: 'huge', namespace: 'capped' } }
      await server.client.create(jobs, 'capped', huge)
      await untilPasses(async () => {
        const created = (await server.client.list(pods, 'capped', { labelSelector: 'batch.kubernetes.io/job-name=huge' })).items
        assert.equal(created.length, 3)
      }, 30_000)
      // Still answering, and the Job did not go on creating past the refusals.
      assert.equal((await server.client.list(pods, 'capped')).items.length, 3)
    } finally {
      await server.shutdown()
    }
  })
})
