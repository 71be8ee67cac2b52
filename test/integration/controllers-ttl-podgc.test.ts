import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer, manualClock } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { StatusError } from '../../core/machinery/status-error.js'
import { nodes } from '../../core/resources/core/nodes.js'
import { pods } from '../../core/resources/core/pods.js'
import { jobs } from '../../core/resources/groups/batch.js'
import { untilPasses } from './harness.js'

const NS = 'default'

const jobNamed = (name: string, ttl: number): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: NS },
  spec: { ttlSecondsAfterFinished: ttl, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox' }] } } },
})

const podOn = (name: string, nodeName: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: { nodeName, containers: [{ name: 'app', image: 'nginx' }] },
})

async function gone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read()
    return false
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) return true
    throw err
  }
}

describe('ttl-after-finished controller', () => {
  it('deletes a finished Job, and its pods, once its ttlSecondsAfterFinished has passed', async () => {
    const clock = manualClock()
    const server = createApiServer({ controllers: ['job', 'ttl-after-finished'], authorizationModes: ['RBAC'] }, { now: clock.now })
    try {
      await server.ready
      await server.client.create(jobs, NS, jobNamed('short-lived', 60))
      let pod: KubeObject | undefined
      await untilPasses(async () => {
        pod = (await server.client.list(pods, NS, { labelSelector: 'job-name=short-lived' })).items[0]
        assert.ok(pod, 'the Job has a pod')
      })
      await server.client.updateStatus(pods, NS, { ...pod!, status: { phase: 'Succeeded' } })
      await untilPasses(async () => {
        const job = await server.client.get(jobs, NS, 'short-lived')
        assert.ok((job['status'] as { completionTime?: string }).completionTime, 'the Job completes')
      })
      // Not before the TTL: the Job stays.
      clock.advance(30_000)
      await new Promise((resolve) => setTimeout(resolve, 1200))
      assert.equal((await server.client.get(jobs, NS, 'short-lived')).metadata.name, 'short-lived')
      clock.advance(31_000)
      await untilPasses(async () => {
        assert.ok(await gone(() => server.client.get(jobs, NS, 'short-lived')), 'the Job is deleted')
        assert.equal((await server.client.list(pods, NS, { labelSelector: 'job-name=short-lived' })).items.length, 0)
      })
    } finally {
      await server.shutdown()
    }
  })
})

describe('pod garbage collector', () => {
  it('deletes the pods of a node that no longer exists after the quarantine, and leaves the others', async () => {
    const clock = manualClock()
    const server = createApiServer({ controllers: ['podgc'], authorizationModes: ['RBAC'] }, { now: clock.now })
    try {
      await server.ready
      await server.client.create(nodes, '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'here' } })
      await server.client.create(pods, NS, podOn('orphan', 'gone'))
      await server.client.create(pods, NS, podOn('housed', 'here'))
      // Within the quarantine the orphan stays.
      await new Promise((resolve) => setTimeout(resolve, 300))
      clock.advance(10_000)
      await new Promise((resolve) => setTimeout(resolve, 800))
      assert.equal((await server.client.get(pods, NS, 'orphan')).metadata.name, 'orphan')
      await untilPasses(async () => {
        clock.advance(15_000)
        assert.ok(await gone(() => server.client.get(pods, NS, 'orphan')), 'the orphaned pod is deleted')
      })
      assert.equal((await server.client.get(pods, NS, 'housed')).metadata.name, 'housed')
    } finally {
      await server.shutdown()
    }
  })
})
